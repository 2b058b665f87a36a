/* SPDX-License-Identifier: MIT */
/*
 * Text output of the post-mortem reports (report, replay): lines that fit
 * the width the command was asked for (COLUMNS, else the terminal's, else
 * 80; the command works it out and passes it down, this room knows no
 * terminal).
 */
#ifndef ROCEWATCH_PM_TEXT_H
#define ROCEWATCH_PM_TEXT_H

#include <stdio.h>

#define PM_DEFAULT_WIDTH 80

/*
 * Print text from column col (what the line already holds), breaking at
 * spaces so no line passes width; continuation lines start at column
 * indent.  A word longer than a line is printed whole.  Ends the line.
 */
void pm_wrap(FILE *f, int col, int width, int indent, const char *text);

/*
 * A row: head (already laid out in columns), then text beside it when the
 * two fit in width, else text on the lines below at column indent.
 */
void pm_row(FILE *f, int width, int indent, const char *head, const char *text);

#endif
