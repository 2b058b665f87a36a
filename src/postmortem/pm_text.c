// SPDX-License-Identifier: MIT
#include <string.h>

#include "pm_text.h"

void pm_wrap(FILE *f, int col, int width, int indent, const char *text)
{
	const char *p = text + strspn(text, " ");
	int first = 1; /* no word on this line yet */

	while (*p) {
		int w = (int)strcspn(p, " "), gap = first ? 0 : 1;

		if (col > indent && col + gap + w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			gap = 0;
		}
		if (gap)
			fputc(' ', f);
		fwrite(p, 1, (size_t)w, f);
		col += gap + w;
		first = 0;
		p += w;
		p += strspn(p, " ");
	}
	fputc('\n', f);
}

void pm_row(FILE *f, int width, int indent, const char *head, const char *text)
{
	char compact[512];
	size_t n = 0;

	if ((int)(strlen(head) + 1 + strlen(text)) <= width) {
		fprintf(f, "%s %s\n", head, text);
		return;
	}
	/* the text goes below; a head wider than the line loses its column padding */
	n = strlen(head);
	while (n && head[n - 1] == ' ')
		n--;
	if ((int)n <= width) {
		fprintf(f, "%.*s\n%*s", (int)n, head, indent, "");
		pm_wrap(f, indent, width, indent, text);
		return;
	}
	n = 0;
	for (const char *p = head; *p && n + 1 < sizeof(compact); p++)
		if (*p != ' ' || n < 2 || compact[n - 1] != ' ' || compact[n - 2] != ' ')
			compact[n++] = *p;
	while (n && compact[n - 1] == ' ')
		n--;
	compact[n] = '\0';
	if ((int)n <= width)
		fprintf(f, "%s\n", compact);
	else
		pm_wrap(f, 0, width, indent, compact);
	fprintf(f, "%*s", indent, "");
	pm_wrap(f, indent, width, indent, text);
}
