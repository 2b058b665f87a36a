/* SPDX-License-Identifier: MIT */
/* What the daemon knows about its own loops (rendered as rocewatch_poll* self metrics). */
#ifndef ROCEWATCH_POLL_STATS_H
#define ROCEWATCH_POLL_STATS_H

#include <stdint.h>

struct poll_stats {
	uint64_t fast_polls, slow_polls, overruns;
	uint64_t event_passes; /* notifications acted on between polls (daemon_event_pass()) */
	double last_fast_seconds, last_slow_seconds; /* duration of the last poll */
	double lag_seconds;			     /* how late the last fast poll started */
	int64_t start_ns;			     /* realtime */
	int64_t last_poll_ns;			     /* realtime */
	uint64_t reloads_failed;
};

#endif
