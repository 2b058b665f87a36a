// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "cli.h"
#include "rules_json.h"
#include "rules_serve.h"
#include "util.h"

static int opt_rules(void *base, const char *name, const char *arg)
{
	struct rules_serve *rs = base;

	if (!strcmp(name, "state-dir")) {
		if (!*arg || snprintf(rs->state_path, sizeof(rs->state_path), "%s/health.state",
				      arg) >= (int)sizeof(rs->state_path)) {
			fprintf(stderr,
				"rocewatch serve: --state-dir: '%s' is not a usable directory\n",
				arg);
			return -EINVAL;
		}
		return 0;
	}
	return cli_rules_option("serve", &rs->spec, !strcmp(name, "param"), arg) ? -EINVAL : 0;
}

const struct cli_opt rules_serve_opts[] = {
	CLI_OPT_RULES(opt_rules,
		      "  --profile NAME|FILE        rule profile to evaluate after every poll\n"
		      "                             (repeatable; default " RULES_DEFAULT_PROFILE
		      ")\n"),
	{ .name = "state-dir",
	  .kind = CLI_CALL,
	  .fn = opt_rules,
	  .usage =
	      "  --state-dir DIR            keep health memory (escalations, counter history)\n"
	      "                             in DIR/health.state across restarts (default\n"
	      "                             $STATE_DIRECTORY, set by systemd's "
	      "StateDirectory=)\n" },
	{ 0 },
};

static int64_t model_ns(const struct node_model *m)
{
	return ts_ns(&m->time);
}

/*
 * Often enough that a kill -9 loses little counter history, rarely enough to
 * cost nothing; a new failure episode of a degraded rule is saved at once.
 */
#define STATE_SAVE_NS (10LL * 1000000000LL)

static void save_state(struct rules_serve *rs, bool force)
{
	int64_t now = mono_ns();
	int r;

	if (!rs->state_path[0] || !rs->e)
		return;
	if (!force && !rules_health_dirty(rs->e) && now - rs->state_saved_ns < STATE_SAVE_NS)
		return;
	rs->state_saved_ns = now;
	r = rules_health_save(rs->e, rs->state_path, rs->boot_id);
	if (r && r != rs->state_err)
		log_warn("rules: cannot save health memory to %s: %s", rs->state_path,
			 strerror(-r));
	else if (!r && rs->state_err)
		log_info("rules: health memory saved to %s again", rs->state_path);
	rs->state_err = r;
}

static void read_boot_id(struct rules_serve *rs, const char *procfs)
{
	char path[512];
	FILE *f;

	rs->boot_id[0] = '\0';
	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", procfs ? procfs : "/proc");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(rs->boot_id, sizeof(rs->boot_id), f))
		rs->boot_id[strcspn(rs->boot_id, "\n ")] = '\0';
	fclose(f);
}

/* Called with the model lock held, after every poll. */
static void after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct rules_serve *rs = arg;
	int64_t t0 = mono_ns();
	int r;

	(void)what;
	if (!rs->e)
		return;
	r = rules_evaluate(rs->e, m, model_ns(m));
	rs->st.eval_seconds = (double)(mono_ns() - t0) / 1e9;
	if (!rs->announced) {
		/* said at the first poll, not at start-up: start-up errors stay one line */
		rs->announced = true;
		for (size_t p = 0; p < rules_profile_count(rs->e); p++)
			log_info("rules: profile %s: %zu rules from %s",
				 rules_profile(rs->e, p)->name, rules_profile(rs->e, p)->n_rules,
				 rules_profile(rs->e, p)->file);
	}
	if (r)
		rw_log_once(LOG_LVL_ERROR, "rules-eval", "rules: evaluation failed: %s (said once)",
			    strerror(-r));
	else
		rw_log_once_reset("rules-eval");
	if (!r)
		save_state(rs, false);
}

static void render(struct strbuf *sb, void *arg)
{
	struct rules_serve *rs = arg;

	prom_rules_render(sb, rs->e, &rs->st);
}

static void log_diags(const struct rules_diags *dg, bool to_stderr)
{
	for (size_t i = 0; i < dg->n; i++) {
		char line[1024];

		rules_diag_format(&dg->d[i], line, sizeof(line));
		if (to_stderr)
			fprintf(stderr, "rocewatch serve: %s\n", line);
		else if (dg->d[i].warning)
			log_warn("rules: %s", line);
		else
			log_err("rules: %s", line);
	}
}

int rules_serve_start(struct rules_serve *rs, struct daemon *d)
{
	struct rules_diags dg = { 0 };
	const struct daemon_hook hook = {
		.name = "rules",
		.after_poll = after_poll,
		.render = render,
		.arg = rs,
	};
	int r = rules_load(&rs->spec, &rs->e, &dg);

	pthread_mutex_init(&rs->rl_lock, NULL);
	rs->d = d;
	rs->st.reload_ns = real_ns();
	log_diags(&dg, true);
	rules_diags_free(&dg);
	if (r)
		return r;
	rs->st.reload_ok = true;
	if (!rs->state_path[0] && getenv("STATE_DIRECTORY") && *getenv("STATE_DIRECTORY")) {
		/* systemd's StateDirectory= (a list, ':'-separated: the first is ours) */
		char dir[4000];

		strlcpy0(dir, getenv("STATE_DIRECTORY"), sizeof(dir));
		dir[strcspn(dir, ":")] = '\0';
		snprintf(rs->state_path, sizeof(rs->state_path), "%s/health.state", dir);
	}
	if (rs->state_path[0]) {
		char msg[512], dir[4096];

		/* the unit's StateDirectory= exists; a --state-dir of one's own may not yet */
		strlcpy0(dir, rs->state_path, sizeof(dir));
		*strrchr(dir, '/') = '\0';
		if (dir[0] && mkdir(dir, 0750) && errno != EEXIST)
			log_warn("rules: --state-dir %s: %s", dir, strerror(errno));
		read_boot_id(rs, d->cfg ? d->cfg->procfs_root : NULL);
		if (rules_health_load(rs->e, rs->state_path, rs->boot_id, msg, sizeof(msg)))
			log_warn("rules: health memory: %s", msg);
		else
			log_info("rules: health memory in %s", rs->state_path);
	}
	r = daemon_add_hook(d, &hook);
	if (r) {
		fprintf(stderr, "rocewatch serve: cannot hook the rules into the poll loop: %s\n",
			strerror(-r));
		return r;
	}
	return 0;
}

static void reload_now(struct rules_serve *rs)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *ne = NULL, *old;
	int r;

	/* Parse outside the lock: polls and scrapes go on with the old rules meanwhile. */
	r = rules_load(&rs->spec, &ne, &dg);
	log_diags(&dg, false);
	pthread_mutex_lock(&rs->d->lock);
	rs->st.reload_ns = real_ns();
	rs->reloads++;
	rs->reload_error[0] = '\0';
	if (r) {
		/* what the status page shows: the first error, as the log has it */
		for (size_t i = 0; i < dg.n && !rs->reload_error[0]; i++)
			if (!dg.d[i].warning)
				rules_diag_format(&dg.d[i], rs->reload_error,
						  sizeof(rs->reload_error));
		if (!rs->reload_error[0])
			snprintf(rs->reload_error, sizeof(rs->reload_error), "%s", strerror(-r));
		rs->st.reload_ok = false;
		rs->st.reload_failures++;
		rs->d->stats.reloads_failed++;
		pthread_mutex_unlock(&rs->d->lock);
		rules_diags_free(&dg);
		log_err("rules: reload failed, keeping the previous rules");
		return;
	}
	old = rs->e;
	rules_adopt_history(ne, old);
	rs->e = ne;
	rs->st.reload_ok = true;
	rules_diags_free(&dg);
	/* results for /api/v1/checks at once, not at the next poll */
	if (rs->d->stats.fast_polls)
		rules_evaluate(ne, &rs->d->m, model_ns(&rs->d->m));
	pthread_mutex_unlock(&rs->d->lock);
	rules_free(old);
	log_info("rules: reloaded, %zu rules in %zu profiles", rules_count(ne),
		 rules_profile_count(ne));
}

static void *reload_main(void *arg)
{
	struct rules_serve *rs = arg;

	for (;;) {
		reload_now(rs);
		pthread_mutex_lock(&rs->rl_lock);
		if (!rs->rl_again) {
			rs->rl_running = false;
			pthread_mutex_unlock(&rs->rl_lock);
			return NULL;
		}
		rs->rl_again = false; /* a SIGHUP came while parsing: the file may have changed */
		pthread_mutex_unlock(&rs->rl_lock);
	}
}

void rules_serve_reload(struct rules_serve *rs)
{
	int r;

	pthread_mutex_lock(&rs->rl_lock);
	if (rs->rl_running) {
		rs->rl_again = true;
		pthread_mutex_unlock(&rs->rl_lock);
		return;
	}
	if (rs->rl_joinable) /* finished: it cleared rl_running on its way out */
		pthread_join(rs->rl_thr, NULL);
	rs->rl_joinable = false;
	r = pthread_create(&rs->rl_thr, NULL, reload_main, rs);
	rs->rl_running = rs->rl_joinable = r == 0;
	pthread_mutex_unlock(&rs->rl_lock);
	if (r) {
		log_warn("rules: no thread for the reload (%s): reloading between polls",
			 strerror(r));
		reload_now(rs);
	}
}

void rules_serve_stop(struct rules_serve *rs)
{
	/* never started (serve stopped before its pipeline): no lock, no thread */
	if (!rs->d)
		return;
	pthread_mutex_lock(&rs->rl_lock);
	rs->rl_again = false;
	pthread_mutex_unlock(&rs->rl_lock);
	if (rs->rl_joinable)
		pthread_join(rs->rl_thr, NULL);
	rs->rl_joinable = rs->rl_running = false;
}

int rules_serve_render_checks(void *arg, struct strbuf *out)
{
	struct rules_serve *rs = arg;
	struct rules_json_meta meta = { 0 };
	int r;

	pthread_mutex_lock(&rs->d->lock);
	meta.host = rs->d->m.host;
	meta.time_ns = model_ns(&rs->d->m);
	meta.reload_ok = rs->st.reload_ok;
	meta.reload_ns = rs->st.reload_ns;
	r = rs->e ? rules_json_write(out, rs->e, &meta, false) : -ENOENT;
	pthread_mutex_unlock(&rs->d->lock);
	if (r == -ENOENT) {
		sb_puts(out, "{\"error\":\"no rules loaded\"}\n");
		return 503;
	}
	if (r) {
		sb_puts(out, "{\"error\":\"out of memory\"}\n");
		return 500;
	}
	sb_putc(out, '\n');
	return 200;
}

void rules_serve_fini(struct rules_serve *rs)
{
	rules_serve_stop(rs);
	save_state(rs, true);
	rules_free(rs->e);
	rs->e = NULL;
	rules_spec_free(&rs->spec);
}
