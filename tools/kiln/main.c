/* kiln — the command-line tool: lists devices, shows their properties,
 * manages the program cache and runs the showcase. Uses only the public
 * API. Exit status: 0 success, 1 the command failed, 2 a usage error. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "kiln.h"

typedef struct kiln_cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *args;
    const char *summary;
} kiln_cli_command;

static const kiln_cli_command kiln_cli_commands[] = {
    { "devices", kiln_cmd_devices, "", "list the GPUs and CPUs kiln can use" },
    { "info", kiln_cmd_info, "[SELECTOR]", "show every property of one device" },
    { "version", kiln_cmd_version, "", "print kiln's version" },
    { "cache", kiln_cmd_cache, "path|list|clear|build", "manage the on-disk program cache" },
    { "demo", kiln_cmd_demo, "...", "run the showcase" },
    { "timeline", kiln_cmd_timeline, "TRACE.json [OUT.png]", "draw a KILN_TRACE file" },
};
#define KILN_CLI_NUM_COMMANDS (sizeof kiln_cli_commands / sizeof kiln_cli_commands[0])

static void kiln_cli_usage(FILE *out) {
    fprintf(out, "usage: kiln <command> [options]\n"
                 "\n"
                 "Parallel computing on GPUs and multicore CPUs.\n"
                 "\n"
                 "Commands:\n");
    for (size_t i = 0; i < KILN_CLI_NUM_COMMANDS; i++) {
        char head[48];
        snprintf(head, sizeof head, "%s %s", kiln_cli_commands[i].name, kiln_cli_commands[i].args);
        fprintf(out, "  %-30s %s\n", head, kiln_cli_commands[i].summary);
    }
    fprintf(out, "\n"
                 "Options:\n"
                 "  -h, --help                     show this help (or: kiln help COMMAND)\n"
                 "  --version                      print kiln's version\n"
                 "\n"
                 "Run 'kiln COMMAND --help' for a command's options.\n"
                 "Environment: KILN_DEVICE selects the default device\n"
                 "(\"opencl:0:1\", \"cuda:0\", \"pocl\", \"gpu\"), KILN_CACHE_DIR the cache.\n");
}

static const kiln_cli_command *kiln_cli_find(const char *name) {
    for (size_t i = 0; i < KILN_CLI_NUM_COMMANDS; i++)
        if (strcmp(kiln_cli_commands[i].name, name) == 0)
            return &kiln_cli_commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        kiln_cli_usage(stderr);
        return KILN_CLI_USAGE;
    }
    const char *name = argv[1];
    if (kiln_cli_is_help(name)) {
        kiln_cli_usage(stdout);
        return KILN_CLI_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        return kiln_cmd_version(argc - 1, argv + 1);
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            kiln_cli_usage(stdout);
            return KILN_CLI_OK;
        }
        const kiln_cli_command *cmd = kiln_cli_find(argv[2]);
        if (!cmd) {
            fprintf(stderr, "kiln: unknown command '%s'\n\n", argv[2]);
            kiln_cli_usage(stderr);
            return KILN_CLI_USAGE;
        }
        char help[] = "--help";
        char *sub[] = { argv[2], help, NULL };
        return cmd->run(2, sub);
    }
    if (name[0] == '-') {
        fprintf(stderr, "kiln: unknown option '%s'\n\n", name);
        kiln_cli_usage(stderr);
        return KILN_CLI_USAGE;
    }
    const kiln_cli_command *cmd = kiln_cli_find(name);
    if (!cmd) {
        fprintf(stderr, "kiln: unknown command '%s'\n\n", name);
        kiln_cli_usage(stderr);
        return KILN_CLI_USAGE;
    }
    return cmd->run(argc - 1, argv + 1);
}
