// SPDX-License-Identifier: MIT
#include "term.h"
#include "verdict_color.h"

const char *term_outcome_color(enum rule_outcome o, enum rule_severity sev)
{
	switch (o) {
	case RULE_PASS:
		return TERM_GREEN;
	case RULE_FAIL:
		return sev == SEV_CRITICAL ? TERM_RED : sev == SEV_WARNING ? TERM_YEL : "";
	case RULE_UNKNOWN:
		return TERM_MAG;
	default:
		return TERM_DIM;
	}
}

const char *term_status_color(enum rules_status s)
{
	return s == RULES_OK	     ? TERM_GREEN
	       : s == RULES_WARNING  ? TERM_YEL
	       : s == RULES_CRITICAL ? TERM_RED
				     : TERM_MAG;
}
