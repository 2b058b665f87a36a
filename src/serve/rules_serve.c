// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "engine_opts.h"
#include "http.h"
#include "rules_json.h"
#include "rules_serve.h"
#include "rules_stage.h"
#include "util.h"

/* --state-dir DIR: the health memory's file in it. */
static int opt_state_dir(const struct cli_opt *o, void *member, const char *arg)
{
	if (!*arg || snprintf(member, o->size, "%s/health.state", arg) >= (int)o->size)
		return CLI_BAD;
	return 0;
}

const struct cli_opt rules_serve_opts[] = {
	CLI_OPT_RULES(struct rules_serve, spec,
		      "rule profile to evaluate after every poll\n"
		      "(repeatable; default " RULES_DEFAULT_PROFILE ");\n"
		      "where a driver lacks the counters of fatal\n"
		      "link-health rules, the page and\n"
		      "rocewatch_rule_coverage say so, and the node\n"
		      "verdict is unknown, not healthy"),
	{ .name = "web.enable-health-api",
	  CLI_FLAG_AT(struct rules_serve, reset_api),
	  .help = "allow POST /api/v1/health/reset?rule=R&object=O:\n"
		  "an operator's acknowledgement after a repair\n"
		  "forgets a degraded rule's failure episodes on one\n"
		  "object (off: 403; behind --web.config.file's\n"
		  "auth); `rocewatch health reset` without serve" },
	CLI_OPT_RAIL_MAP(struct rules_serve, rail_map),
	{ .name = "state-dir",
	  CLI_CALL_AT(struct rules_serve, state_path, opt_state_dir),
	  .bad = "a usable directory",
	  .metavar = "DIR",
	  .help = "keep health memory (escalations, counter history)\n"
		  "in DIR/health.state across restarts (default\n"
		  "$STATE_DIRECTORY, set by systemd's StateDirectory=)" },
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

/* The writer: the newest text to disk, outside every lock but its own. */
static void *writer_main(void *arg)
{
	struct rules_serve *rs = arg;
	struct strbuf buf = { 0 };

	pthread_mutex_lock(&rs->wr_lock);
	for (;;) {
		int r;

		while (!rs->wr_pending && !rs->wr_stop)
			pthread_cond_wait(&rs->wr_cond, &rs->wr_lock);
		if (!rs->wr_pending)
			break; /* stopped, nothing left to write */
		sb_swap(&buf, &rs->wr_buf);
		rs->wr_pending = false;
		rs->wr_busy = true;
		pthread_mutex_unlock(&rs->wr_lock);
		r = rules_health_write(rs->state_path, buf.buf, buf.len);
		if (r && r != rs->state_err)
			log_warn("rules: cannot save health memory to %s: %s", rs->state_path,
				 strerror(-r));
		else if (!r && rs->state_err)
			log_info("rules: health memory saved to %s again", rs->state_path);
		rs->state_err = r;
		__atomic_store_n(&rs->st.memory_err, r, __ATOMIC_RELAXED);
		pthread_mutex_lock(&rs->wr_lock);
		rs->wr_busy = false;
		pthread_cond_broadcast(&rs->wr_cond);
	}
	pthread_mutex_unlock(&rs->wr_lock);
	sb_free(&buf);
	return NULL;
}

/* Hand the newest text to the writer (a text it has not taken yet is replaced). */
static void hand_over(struct rules_serve *rs)
{
	pthread_mutex_lock(&rs->wr_lock);
	sb_swap(&rs->wr_buf, &rs->ser_buf);
	rs->wr_pending = true;
	pthread_cond_signal(&rs->wr_cond);
	pthread_mutex_unlock(&rs->wr_lock);
}

/* Called with the model lock held: serialize only (memory, no disk). */
static void save_state(struct rules_serve *rs, bool force)
{
	int64_t now = mono_ns();

	if (!rs->state_path[0] || !rs->e || !rs->wr_started)
		return;
	if (!force && !rules_health_dirty(rs->e) && now - rs->state_saved_ns < STATE_SAVE_NS)
		return;
	rs->state_saved_ns = now;
	if (rules_health_serialize(rs->e, rs->boot_id, &rs->ser_buf)) {
		rw_log_once(LOG_LVL_WARN, "rules-state-oom",
			    "rules: health memory not saved: out of memory (said once)");
		return;
	}
	rw_log_once_reset("rules-state-oom");
	hand_over(rs);
}

/*
 * One rocewatch per state directory: a second serve would erase the first
 * one's memory with its own at every save.  The lock file holds the owner's
 * pid; *holder gets it on -EBUSY.
 */
int rules_state_lock(const char *dir, int *fd_out, char *holder, size_t len)
{
	char path[4200], pid[32] = "";
	struct stat st;
	int fd;

	holder[0] = '\0';
	snprintf(path, sizeof(path), "%s/health.state.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);

		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		strlcpy0(holder, pid[0] ? pid : "unknown", len);
		close(fd);
		return err == EWOULDBLOCK ? -EBUSY : -err;
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, strlen(pid), 0) < 0)
		log_debug("rules: %s: cannot write the pid: %s", path, strerror(errno));
	*fd_out = fd;
	return 0;
}

static int lock_state_dir(struct rules_serve *rs, const char *dir)
{
	char pid[32];
	int r = rules_state_lock(dir, &rs->lock_fd, pid, sizeof(pid));

	if (r == -EBUSY)
		fprintf(stderr,
			"rocewatch serve: --state-dir %s is in use by another rocewatch serve (pid "
			"%s): two would erase each other's health memory; give this one a "
			"--state-dir of its own\n",
			dir, pid);
	else if (r)
		fprintf(stderr, "rocewatch serve: --state-dir %s: %s/health.state.lock: %s\n", dir,
			dir, r == -EINVAL ? "not a regular file" : strerror(-r));
	else
		rs->locked = true;
	return r;
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
	const struct rules_stage st = { .e = rs->e };
	struct rules_pass pass = { .now_ns = model_ns(m) };
	int64_t t0 = mono_ns();
	int r;

	if (!rs->e)
		return;
	/*
	 * A fast poll re-read the counters and nothing else: the rules over
	 * configuration alone would decide as they did (and render the same
	 * summaries); they run when the configuration is read again.
	 */
	if (!(what & COLLECT_SLOW) && !daemon_pass(rs->d)->all) {
		pass.changed = daemon_pass(rs->d)->changed;
		pass.flags = RULES_EVAL_COUNTERS;
	}
	r = rules_stage_evaluate(&st, m, &pass, NULL);
	rs->eval_done_ns = mono_ns();
	rs->st.eval_seconds = (double)(rs->eval_done_ns - t0) / 1e9;
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

/* An event pass: the rules that read what the notification changed, now. */
static void after_event(void *arg, struct node_model *m, const struct daemon_event *ev)
{
	struct rules_serve *rs = arg;
	const struct rules_stage st = { .e = rs->e };
	const struct rules_pass pass = { .now_ns = ev->t_ns,
					 .changed = ev->changed,
					 .event = true };
	size_t n = 0;
	int r;

	if (!rs->e)
		return;
	r = rules_stage_evaluate(&st, m, &pass, &n);
	rs->eval_done_ns = mono_ns();
	if (r)
		log_debug("rules: %s notification: %s (the next poll evaluates)", ev->collector,
			  strerror(-r));
	else if (n)
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

static int fabric_config_of(const struct rules_engine *e, const char *rail_map,
			    struct fabric_config *fc, char *err, size_t errlen)
{
	int r;

	fabric_config_init(fc);
	r = rules_fabric_config(e, fc, err, errlen);
	if (!r && rail_map)
		r = rules_load_rail_map(rail_map, fc, err, errlen);
	if (r)
		fabric_config_free(fc);
	return r;
}

int rules_fabric_setup(const struct rules_engine *e, const char *rail_map, struct daemon *d,
		       char *err, size_t errlen)
{
	struct fabric_config fc;
	int r = fabric_config_of(e, rail_map, &fc, err, errlen);

	if (!r)
		daemon_set_fabric(d, &fc);
	return r;
}

struct daemon_hook rules_serve_hook(struct rules_serve *rs)
{
	return (struct daemon_hook){
		.name = "rules",
		.after_poll = after_poll,
		.after_event = after_event,
		.render = render,
		.arg = rs,
	};
}

int rules_serve_start(struct rules_serve *rs, struct daemon *d)
{
	struct rules_diags dg = { 0 };
	int r = rules_load(&rs->spec, &rs->e, &dg);

	pthread_mutex_init(&rs->rl_lock, NULL);
	pthread_mutex_init(&rs->wr_lock, NULL);
	pthread_cond_init(&rs->wr_cond, NULL);
	rs->d = d;
	rs->st.reload_ns = real_ns();
	log_diags(&dg, true);
	rules_diags_free(&dg);
	if (r)
		return r;
	{
		char err[512] = "";

		r = rules_fabric_setup(rs->e, rs->rail_map, d, err, sizeof(err));
		if (r) {
			fprintf(stderr, "rocewatch serve: %s\n", err[0] ? err : strerror(-r));
			return r;
		}
	}
	rs->st.reload_ok = true;
	rs->loads++;
	if (!rs->state_path[0] && getenv("STATE_DIRECTORY") && *getenv("STATE_DIRECTORY")) {
		/* systemd's StateDirectory= (a list, ':'-separated: the first is ours) */
		char dir[4000];

		strlcpy0(dir, getenv("STATE_DIRECTORY"), sizeof(dir));
		dir[strcspn(dir, ":")] = '\0';
		snprintf(rs->state_path, sizeof(rs->state_path), "%s/health.state", dir);
	}
	if (rs->state_path[0]) {
		char dir[4096];

		/* the unit's StateDirectory= exists; a --state-dir of one's own may not yet */
		strlcpy0(dir, rs->state_path, sizeof(dir));
		*strrchr(dir, '/') = '\0';
		if (dir[0] && mkdir(dir, 0750) && errno != EEXIST) {
			/* said as it is: nothing will be kept (serve --user nobody in /var/lib) */
			log_warn("rules: --state-dir %s: %s: health memory off (not kept across "
				 "restarts; rocewatch_health_memory_kept 0)",
				 dir, strerror(errno));
			rs->state_path[0] = '\0';
		}
	}
	if (rs->state_path[0]) {
		char msg[1024], dir[4096];
		int lr;

		strlcpy0(dir, rs->state_path, sizeof(dir));
		*strrchr(dir, '/') = '\0';
		r = lock_state_dir(rs, dir[0] ? dir : "/");
		if (r)
			return r;
		read_boot_id(rs, daemon_config(d) ? daemon_config(d)->procfs_root : NULL);
		lr = rules_health_load(rs->e, rs->state_path, rs->boot_id, msg, sizeof(msg));
		if (msg[0])
			log_warn("rules: health memory: %s", msg);
		if (!lr)
			log_info("rules: health memory in %s", rs->state_path);
		rs->st.memory_on = true;
		r = pthread_create(&rs->wr_thr, NULL, writer_main, rs);
		rs->wr_started = r == 0;
		if (r) {
			log_warn("rules: no thread to write %s (%s): health memory off (not kept "
				 "across restarts)",
				 rs->state_path, strerror(r));
			rs->state_path[0] = '\0';
			rs->st.memory_on = false;
		}
	}
	return 0;
}

static void reload_now(struct rules_serve *rs)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *ne = NULL, *old;
	struct node_model *m;
	int r;

	/* Parse outside the lock: polls and scrapes go on with the old rules meanwhile. */
	struct fabric_config fc;
	char ferr[512] = "";

	r = rules_load(&rs->spec, &ne, &dg);
	log_diags(&dg, false);
	fabric_config_init(&fc);
	if (!r && fabric_config_of(ne, rs->rail_map, &fc, ferr, sizeof(ferr))) {
		/* a rail map or roles that do not load: the old rules and rails stay */
		log_err("rules: %s", ferr);
		rules_free(ne);
		ne = NULL;
		r = -EINVAL;
	}
	m = daemon_model_lock(rs->d);
	rs->st.reload_ns = real_ns();
	rs->reloads++;
	rs->reload_error[0] = '\0';
	if (r) {
		/* what the status page shows: the first error, as the log has it */
		for (size_t i = 0; i < dg.n && !rs->reload_error[0]; i++)
			if (!dg.d[i].warning)
				rules_diag_format(&dg.d[i], rs->reload_error,
						  sizeof(rs->reload_error));
		if (!rs->reload_error[0] && ferr[0])
			snprintf(rs->reload_error, sizeof(rs->reload_error), "%s", ferr);
		if (!rs->reload_error[0])
			snprintf(rs->reload_error, sizeof(rs->reload_error), "%s", strerror(-r));
		rs->st.reload_ok = false;
		rs->st.reload_failures++;
		daemon_stats(rs->d)->reloads_failed++;
		daemon_model_unlock(rs->d);
		rules_diags_free(&dg);
		log_err("rules: reload failed, keeping the previous rules");
		return;
	}
	old = rs->e;
	rules_adopt_history(ne, old);
	rs->e = ne;
	daemon_swap_fabric(rs->d, &fc); /* under the lock: the poll reads it */
	rs->loads++;
	rs->st.reload_ok = true;
	rules_diags_free(&dg);
	/* results for /api/v1/checks at once, not at the next poll */
	if (daemon_started(rs->d))
		rules_evaluate(ne, m, model_ns(m));
	daemon_model_unlock(rs->d);
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
	struct node_model *m;
	int r;

	m = daemon_model_lock(rs->d);
	meta.host = m->host;
	meta.time_ns = model_ns(m);
	meta.reload_ok = rs->st.reload_ok;
	meta.reload_ns = rs->st.reload_ns;
	r = rs->e ? rules_json_write(out, rs->e, &meta, false) : -ENOENT;
	daemon_model_unlock(rs->d);
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

/* How long exit waits for the last write (a hung disk must not keep serve from stopping). */
#define WRITER_EXIT_WAIT_S 5

static void stop_writer(struct rules_serve *rs)
{
	struct timespec until;
	int r;

	if (!rs->wr_started)
		return;
	pthread_mutex_lock(&rs->wr_lock);
	rs->wr_stop = true;
	pthread_cond_signal(&rs->wr_cond);
	pthread_mutex_unlock(&rs->wr_lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WRITER_EXIT_WAIT_S;
	r = pthread_timedjoin_np(rs->wr_thr, NULL, &until);
	if (r) {
		log_warn("rules: the health memory write to %s did not finish in %d s: exiting "
			 "without it",
			 rs->state_path, WRITER_EXIT_WAIT_S);
		pthread_detach(rs->wr_thr);
	}
	rs->wr_started = false;
	if (!r) {
		sb_free(&rs->wr_buf);
		pthread_cond_destroy(&rs->wr_cond);
		pthread_mutex_destroy(&rs->wr_lock);
	}
}

int rules_serve_render_reset(void *arg, const struct http_args *a, struct strbuf *out)
{
	struct rules_serve *rs = arg;
	const char *rule = http_arg(a, "rule"), *object = http_arg(a, "object");
	struct node_model *m;
	char err[256] = "";
	size_t n = 0;
	int r;

	if (!rs->reset_api) {
		sb_puts(out, "{\"error\":\"the health reset API is off: start serve with "
			     "--web.enable-health-api\"}\n");
		return 403;
	}
	if (!rule || !*rule || !object) {
		sb_puts(out, "{\"error\":\"give the rule and the object: "
			     "POST /api/v1/health/reset?rule=RULE&object=OBJECT (eth2, mlx5_0/1, "
			     "node)\"}\n");
		return 400;
	}
	m = daemon_model_lock(rs->d);
	r = rs->e ? rules_health_forget(rs->e, rule, object, &n, err, sizeof(err)) : -ENOENT;
	if (!r && daemon_started(rs->d))
		/* the results as they read now, for /api/v1/checks and the page */
		rules_evaluate(rs->e, m, model_ns(m));
	if (!r)
		save_state(rs, true);
	daemon_model_unlock(rs->d);
	if (r) {
		sb_puts(out, "{\"error\":\"");
		sb_label_escape(out, rs->e ? err : "no rules loaded");
		sb_puts(out, "\"}\n");
		return r == -ENOENT ? 404 : 400;
	}
	log_info("rules: health reset from %s: %s on %s acknowledged, %zu failure episodes "
		 "forgotten",
		 http_arg_peer(a), rule, object, n);
	sb_puts(out, "{\"status\":\"reset\",\"rule\":\"");
	sb_label_escape(out, rule);
	sb_puts(out, "\",\"object\":\"");
	sb_label_escape(out, object);
	sb_printf(out, "\",\"episodes_forgotten\":%zu}\n", n);
	return 200;
}

void rules_serve_fini(struct rules_serve *rs)
{
	rules_serve_stop(rs);
	/* the daemon is stopped: the last memory, then the writer drains and goes */
	save_state(rs, true);
	stop_writer(rs);
	sb_free(&rs->ser_buf);
	if (rs->locked)
		close(rs->lock_fd);
	rs->locked = false;
	rules_free(rs->e);
	rs->e = NULL;
	rules_spec_free(&rs->spec);
}
