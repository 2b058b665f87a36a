// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "status_page.h"
#include "status_serve.h"
#include "util.h"

static void after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct status_serve *ss = arg;

	(void)what;
	status_history_feed(&ss->hist, m, ts_ns(&m->time));
}

int status_serve_start(struct status_serve *ss, struct daemon *d, struct rules_serve *rs,
		       struct alerts_serve *as, const char *telemetry_path)
{
	int64_t step = daemon_config(d)->interval_ns;

	/* a point a second at most: 5 minutes on the page at any --interval down to 100 ms */
	if (step < 1000000000LL)
		step = 1000000000LL;
	status_history_init(&ss->hist, step);
	ss->d = d;
	ss->rs = rs;
	ss->as = as;
	ss->telemetry_path = telemetry_path;
	return 0;
}

struct daemon_hook status_serve_hook(struct status_serve *ss)
{
	return (struct daemon_hook){ .name = "status", .after_poll = after_poll, .arg = ss };
}

int status_serve_render(void *arg, struct strbuf *out)
{
	struct status_serve *ss = arg;
	struct daemon *d = ss->d;
	const struct rw_config *cfg = daemon_config(d);
	const struct poll_stats *stats = daemon_stats(d);
	struct am_status am;
	struct node_model *m;
	int r, refresh_s = (int)((cfg->interval_ns + 999999999LL) / 1000000000LL);

	if (refresh_s < STATUS_PAGE_REFRESH_S)
		refresh_s = STATUS_PAGE_REFRESH_S;
	/* a copy under the pusher's own lock, taken outside the model's: never both at once */
	am_get_status(ss->as->am, &am);
	m = daemon_model_lock(d);
	r = status_page_render(
	    out, &(struct status_page_input){
		     .version = ROCEWATCH_VERSION,
		     .host = m->host,
		     .telemetry_path = ss->telemetry_path,
		     .now_ns = real_ns(),
		     .poll_ns = daemon_started(d) ? ts_ns(&m->time) : 0,
		     .interval_ns = cfg->interval_ns,
		     .fast_polls = stats->fast_polls,
		     .slow_polls = stats->slow_polls,
		     .replay = daemon_samples(d) > 0,
		     .m = m,
		     .e = ss->rs->e,
		     .alerts = &ss->as->t,
		     .am = &am,
		     .reload = { .ok = ss->rs->st.reload_ok,
				 .ns = ss->rs->st.reload_ns,
				 .reloads = ss->rs->reloads,
				 .failures = ss->rs->st.reload_failures,
				 .error = ss->rs->reload_error },
		     .hist = &ss->hist,
		     /* rendered once per poll: reloading faster than that shows nothing new */
		     .refresh_s = refresh_s,
		 });
	daemon_model_unlock(d);
	if (r) {
		sb_reset(out);
		sb_puts(out, "out of memory\n");
		return 500;
	}
	return 200;
}

void status_serve_fini(struct status_serve *ss)
{
	history_free(&ss->hist);
}
