/* The kiln tool's subcommands. Each takes argc/argv after the subcommand's
 * name (argv[0] is the subcommand) and returns the process exit status. */
#ifndef KILN_TOOL_COMMANDS_H
#define KILN_TOOL_COMMANDS_H

int kiln_cmd_devices(int argc, char **argv);
int kiln_cmd_info(int argc, char **argv);
int kiln_cmd_version(int argc, char **argv);
int kiln_cmd_cache(int argc, char **argv);
/* tools/kiln/cmd_timeline.c: a trace file as a picture. */
int kiln_cmd_timeline(int argc, char **argv);
/* tools/kiln/demo*.c: the showcase (polygon mask, pairwise distances). */
int kiln_cmd_demo(int argc, char **argv);

#endif
