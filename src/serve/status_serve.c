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
	int64_t step = d->cfg->interval_ns;
	int r;

	/* a point a second at most: 5 minutes on the page at any --interval down to 100 ms */
	if (step < 1000000000LL)
		step = 1000000000LL;
	status_history_init(&ss->hist, step);
	ss->d = d;
	ss->rs = rs;
	ss->as = as;
	ss->telemetry_path = telemetry_path;
	r = daemon_add_hook(
	    d, &(struct daemon_hook){ .name = "status", .after_poll = after_poll, .arg = ss });
	if (r)
		fprintf(stderr,
			"rocewatch serve: cannot hook the status page into the poll loop: %s\n",
			strerror(-r));
	return r;
}

int status_serve_render(void *arg, struct strbuf *out)
{
	struct status_serve *ss = arg;
	struct daemon *d = ss->d;
	struct am_status am;
	int r, refresh_s = (int)((d->cfg->interval_ns + 999999999LL) / 1000000000LL);

	if (refresh_s < STATUS_PAGE_REFRESH_S)
		refresh_s = STATUS_PAGE_REFRESH_S;
	/* a copy under the pusher's own lock, taken outside the model's: never both at once */
	am_get_status(ss->as->am, &am);
	pthread_mutex_lock(&d->lock);
	r = status_page_render(
	    out, &(struct status_page_input){
		     .version = ROCEWATCH_VERSION,
		     .host = d->m.host,
		     .telemetry_path = ss->telemetry_path,
		     .now_ns = real_ns(),
		     .poll_ns = d->stats.fast_polls ? ts_ns(&d->m.time) : 0,
		     .interval_ns = d->cfg->interval_ns,
		     .fast_polls = d->stats.fast_polls,
		     .slow_polls = d->stats.slow_polls,
		     .replay = daemon_samples(d) > 0,
		     .m = &d->m,
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
	pthread_mutex_unlock(&d->lock);
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
