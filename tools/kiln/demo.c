/* Placeholder until the showcase lands: the demo engineer replaces this
 * file with the real `kiln demo`. */
#include <stdio.h>

#include "commands.h"

int kiln_cmd_demo(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "kiln demo: not built yet\n");
    return 1;
}
