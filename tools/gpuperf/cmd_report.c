/*
 * cmd_report.c - `gpuperf report` (being written: not usable yet).
 */
#include "cli.h"

/* See cli.h. */
int cmd_report(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return cli_error(CLI_USAGE, "report: not implemented yet");
}
