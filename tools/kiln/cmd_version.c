/* kiln version */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "kiln.h"

static const char kiln_version_usage[] =
    "usage: kiln version\n"
    "\n"
    "Prints the version of the kiln library this tool runs with.\n";

int kiln_cmd_version(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (kiln_cli_is_help(argv[i])) {
            fputs(kiln_version_usage, stdout);
            return KILN_CLI_OK;
        }
        return kiln_cli_usage_error("version", kiln_version_usage, "unexpected argument '%s'",
                                    argv[i]);
    }
    printf("kiln %s\n", kiln_version());
    if (strcmp(kiln_version(), KILN_VERSION_STRING) != 0)
        printf("(built against headers of kiln %s)\n", KILN_VERSION_STRING);
    return KILN_CLI_OK;
}
