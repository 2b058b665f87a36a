/* SPDX-License-Identifier: MIT */
/* The colour a verdict is printed in (term.h's codes): check and fleet check alike. */
#ifndef ROCEWATCH_VERDICT_COLOR_H
#define ROCEWATCH_VERDICT_COLOR_H

#include "engine.h"

/* green pass, red critical / yellow warning failure, magenta unknown, dim skipped */
const char *term_outcome_color(enum rule_outcome o, enum rule_severity sev);
/* green ok, yellow warning, red critical, magenta unknown */
const char *term_status_color(enum rules_status s);

#endif
