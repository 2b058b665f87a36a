// SPDX-License-Identifier: MIT
/*
 * Which rules `rocewatch replay` runs.  By default what serve ran: the
 * recording keeps each profile it loaded (name, file, the hash of its text)
 * and every parameter's value, defaults and --param alike (the profiles
 * table, recording_profiles.c), so a threshold serve was given does not turn
 * into a FIRING that never fired live.  Flags override, and the output says
 * so, as it says when the rule files changed since the recording.
 *
 * A changed rule file is replayed, not refused: what an incident reviewer
 * asks is what today's rules make of that night, with the thresholds the
 * node ran; the recording does not keep the old text to run instead, and a
 * refusal would leave nothing but the advice to find the old file.  One
 * line names the profile and both hashes, so the answer is never mistaken
 * for what serve saw.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording.h"
#include "replay.h"
#include "util.h"

static void note(struct replay_rules *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void note(struct replay_rules *out, const char *fmt, ...)
{
	char line[1024], *copy;
	size_t cap = out->n_notes; /* grown one at a time: a handful of lines */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	copy = strdup(line);
	if (!copy || array_grow(&out->notes, &cap, out->n_notes, sizeof(*out->notes), 1)) {
		free(copy);
		return; /* out of memory: a note less, the replay is the same */
	}
	out->notes[out->n_notes++] = copy;
}

/*
 * What to load a recorded profile by: the file serve was given, or the name
 * it found by (its file's name: built-in:NAME.yaml, DIR/NAME.yaml).
 */
static void profile_arg(const struct rec_profile_row *p, char *buf, size_t len)
{
	const char *base = strrchr(p->source, '/'), *colon = strchr(p->source, ':');
	size_t n;

	if (!strcmp(p->origin, "file")) {
		strlcpy0(buf, p->source, len);
		return;
	}
	base = base ? base + 1 : colon ? colon + 1 : p->source;
	n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".yaml"))
		n -= 5;
	else if (n > 4 && !strcmp(base + n - 4, ".yml"))
		n -= 4;
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), base);
	if (!buf[0])
		strlcpy0(buf, p->name, len);
}

static const struct rec_profile_row *recorded_profile(const struct rec_rules *rec, const char *name)
{
	for (size_t i = 0; i < rec->n; i++)
		if (!strcmp(rec->p[i].name, name))
			return &rec->p[i];
	return NULL;
}

static const struct rec_param_row *recorded_param(const struct rec_profile_row *p, const char *name)
{
	for (size_t i = 0; p && i < p->n_params; i++)
		if (!strcmp(p->params[i].name, name))
			return &p->params[i];
	return NULL;
}

/* The flag's value for key, the last one given, or NULL. */
static const char *user_param(const struct rules_spec *user, const char *key)
{
	const char *v = NULL;

	for (size_t i = 0; i < user->n_params; i++)
		if (!strcmp(user->params[i].key, key))
			v = user->params[i].value;
	return v;
}

/* A recorded value as serve was given it: "64MiB", else "0 (the profile's default)". */
static void recorded_text(const struct rec_param_row *q, char *buf, size_t len)
{
	if (q->given)
		snprintf(buf, len, "%s", q->given);
	else
		snprintf(buf, len, "%s (the profile's default)", q->value);
}

/*
 * A recording is outside input: a file it names is read only when it is a
 * regular file here (never a FIFO that blocks the read, a device, a
 * directory).  A name the loader would take for a file is held to the same.
 */
static int recorded_file_ok(const char *arg, char *err, size_t errlen)
{
	size_t n = strlen(arg);
	struct stat st;

	if (!strchr(arg, '/') && !(n > 5 && !strcmp(arg + n - 5, ".yaml")) &&
	    !(n > 4 && !strcmp(arg + n - 4, ".yml")))
		return 0;
	if (!stat(arg, &st) && S_ISREG(st.st_mode))
		return 0;
	snprintf(err, errlen,
		 "the recording names the rule file %s (serve's --profile), %s here: --profile "
		 "replays with another",
		 arg, access(arg, F_OK) ? "not found" : "not a regular file");
	return -ENOENT;
}

/* The spec to load: the profiles and values the recording names, then the flags'. */
static int build_spec(struct rules_spec *run, const struct rules_spec *user,
		      const struct rec_rules *rec, char *err, size_t errlen)
{
	char arg[4096];
	int r = 0;

	for (size_t i = 0; i < user->n_profiles && !r; i++)
		r = rules_spec_add_profile(run, user->profiles[i]);
	for (size_t i = 0; !user->n_profiles && i < rec->n && !r; i++) {
		profile_arg(&rec->p[i], arg, sizeof(arg));
		r = recorded_file_ok(arg, err, errlen);
		if (!r)
			r = rules_spec_add_profile(run, arg);
	}
	/* each profile its own values, defaults included: exactly what it ran with */
	for (size_t i = 0; i < rec->n && !r; i++)
		for (size_t k = 0; k < rec->p[i].n_params && !r; k++)
			r = rules_spec_add_param_for(run, rec->p[i].name, rec->p[i].params[k].name,
						     rec->p[i].params[k].value);
	/* profiles serve did not run get what serve was given, as serve would have */
	for (size_t i = 0; user->n_profiles && i < rec->n && !r; i++)
		for (size_t k = 0; k < rec->p[i].n_params && !r; k++)
			if (rec->p[i].params[k].given)
				r = rules_spec_add_param_for(run, NULL, rec->p[i].params[k].name,
							     rec->p[i].params[k].given);
	for (size_t i = 0; i < user->n_params && !r; i++) {
		snprintf(arg, sizeof(arg), "%s=%s", user->params[i].key, user->params[i].value);
		r = rules_spec_add_param(run, arg);
	}
	return r;
}

/* Was key given to serve already, in a profile before p (one --param is every profile's)? */
static bool given_before(const struct rec_rules *rec, size_t p, const char *key)
{
	for (size_t i = 0; i < p; i++) {
		const struct rec_param_row *q = recorded_param(&rec->p[i], key);

		if (q && q->given)
			return true;
	}
	return false;
}

static void note_profiles(struct replay_rules *out, const struct rules_spec *user,
			  const struct rec_rules *rec)
{
	const struct rules_engine *e = out->e;
	char t[40], list[768], given[768];
	size_t n = 0, g = 0;

	rec_format_time(rec->t_ms, t, sizeof(t));
	list[0] = given[0] = '\0';
	for (size_t i = 0; i < rec->n && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%sprofile %s (%s)",
				      i ? ", " : "", rec->p[i].name, rec->p[i].source);
	for (size_t i = 0; i < rec->n; i++)
		for (size_t k = 0; k < rec->p[i].n_params && g < sizeof(given); k++) {
			const struct rec_param_row *q = &rec->p[i].params[k];

			if (q->given && !given_before(rec, i, q->name))
				g += (size_t)snprintf(given + g, sizeof(given) - g, "%s%s=%s",
						      g ? ", " : "", q->name, q->given);
		}
	if (user->n_profiles) {
		char mine[768];
		size_t m = 0;

		mine[0] = '\0';
		for (size_t i = 0; i < user->n_profiles && m < sizeof(mine); i++)
			m += (size_t)snprintf(mine + m, sizeof(mine) - m, "%s%s", i ? " " : "",
					      user->profiles[i]);
		if (g)
			note(out,
			     "--profile %s replaces the rules serve ran (recorded at %s: %s); "
			     "serve's --param %s still applies where they declare it",
			     mine, t, list, given);
		else
			note(out,
			     "--profile %s replaces the rules serve ran (recorded at %s: %s; "
			     "serve had no --param)",
			     mine, t, list);
	} else if (g) {
		note(out, "rules as serve ran them (recorded at %s): %s, serve's --param %s", t,
		     list, given);
		out->plain_first = out->n_notes == 1;
	} else {
		note(out,
		     "rules as serve ran them (recorded at %s): %s, with the profile defaults "
		     "(serve had no --param)",
		     t, list);
		out->plain_first = out->n_notes == 1;
	}
	/* a rule file that changed since: the one line that says these are not serve's rules */
	for (size_t p = 0; !user->n_profiles && p < rules_profile_count(e); p++) {
		const struct rules_profile_info *pi = rules_profile(e, p);
		const struct rec_profile_row *rp = recorded_profile(rec, pi->name);

		if (!rp || rp->text_hash == pi->text_hash)
			continue;
		if (!strcmp(rp->source, pi->file))
			note(out,
			     "the rules changed since the recording: profile %s (%s) had text hash "
			     "%016" PRIx64 ", has %016" PRIx64
			     " now; replayed with today's rules and the recorded parameters",
			     pi->name, pi->file, rp->text_hash, pi->text_hash);
		else
			note(out,
			     "the rules changed since the recording: profile %s had text hash "
			     "%016" PRIx64 " (%s), %s has %016" PRIx64
			     "; replayed with today's rules and the recorded parameters",
			     pi->name, rp->text_hash, rp->source, pi->file, pi->text_hash);
	}
}

static void note_params(struct replay_rules *out, const struct rules_spec *user,
			const struct rec_rules *rec)
{
	const struct rules_engine *e = out->e;
	char shown[320];

	/* a flag over a recorded value: which one it replaces */
	for (size_t i = 0; i < user->n_params; i++) {
		const struct rec_param_row *q = NULL;
		bool later = false;

		for (size_t j = i + 1; j < user->n_params; j++)
			later |= !strcmp(user->params[j].key, user->params[i].key);
		for (size_t p = 0; p < rec->n && !q; p++)
			q = recorded_param(&rec->p[p], user->params[i].key);
		if (later || !q)
			continue;
		recorded_text(q, shown, sizeof(shown));
		note(out, "--param %s=%s overrides the recorded %s", user->params[i].key,
		     user->params[i].value, shown);
	}
	/* a recorded value today's rules have no use for */
	for (size_t p = 0; !user->n_profiles && p < rec->n; p++) {
		const struct rules_profile_info *pi = NULL;
		size_t idx = 0;

		for (size_t k = 0; k < rules_profile_count(e); k++)
			if (!strcmp(rules_profile(e, k)->name, rec->p[p].name)) {
				pi = rules_profile(e, k);
				idx = k;
			}
		for (size_t k = 0; pi && k < rec->p[p].n_params; k++) {
			const struct rec_param_row *q = &rec->p[p].params[k];
			bool declared = false;

			for (size_t i = 0; i < pi->n_params && !declared; i++) {
				const char *name, *value;

				rules_profile_param(e, idx, i, &name, &value);
				declared = !strcmp(name, q->name);
			}
			if (declared || user_param(user, q->name))
				continue;
			recorded_text(q, shown, sizeof(shown));
			note(out,
			     "the recorded %s=%s of profile %s: no such parameter in the rules "
			     "replayed, not used",
			     q->name, shown, pi->name);
		}
	}
}

/* Every parameter the replay runs with, and where its value came from. */
static void list_params(struct replay_rules *out, const struct rules_spec *user,
			const struct rec_rules *rec)
{
	const struct rules_engine *e = out->e;
	size_t n = 0, cap = 0;

	for (size_t p = 0; p < rules_profile_count(e); p++)
		n += rules_profile(e, p)->n_params;
	if (!n || array_grow(&out->params, &cap, 0, sizeof(*out->params), n))
		return;
	for (size_t p = 0; p < rules_profile_count(e); p++) {
		const struct rules_profile_info *pi = rules_profile(e, p);
		const struct rec_profile_row *rp = recorded_profile(rec, pi->name);

		for (size_t i = 0; i < pi->n_params; i++) {
			struct replay_param *x = &out->params[out->n_params++];
			const struct rec_param_row *q;
			const char *name, *value;
			bool given = false;

			rules_profile_param(e, p, i, &name, &value);
			q = recorded_param(rp, name);
			/* serve's --param applies to every profile that declares it */
			for (size_t k = 0; k < rec->n && !given; k++) {
				const struct rec_param_row *o = recorded_param(&rec->p[k], name);

				given = o && o->given && (q || user->n_profiles);
			}
			strlcpy0(x->profile, pi->name, sizeof(x->profile));
			strlcpy0(x->name, name, sizeof(x->name));
			strlcpy0(x->value, value, sizeof(x->value));
			x->from = user_param(user, name) ? "--param"
				  : given		 ? "serve --param"
				  : q			 ? "recording"
							 : "profile";
		}
	}
}

int replay_rules_load(struct replay_rules *out, const char *db, const struct rules_spec *user,
		      int64_t since_ms, int64_t until_ms, struct rules_diags *dg, char *err,
		      size_t errlen)
{
	struct rules_spec run = { 0 };
	struct rec_rules rec = { 0 };
	struct rec_reader rd;
	int64_t at;
	int r;

	memset(out, 0, sizeof(*out));
	r = rec_open(&rd, db, err, errlen);
	if (r)
		return r;
	rd.who = "rocewatch replay";
	at = since_ms > rd.first_ms ? since_ms : rd.first_ms;
	r = rec_rules_at(&rd, at, until_ms, &rec, err, errlen);
	rec_close(&rd);
	if (r)
		goto free_rec;
	out->recorded = rec.recorded;
	r = build_spec(&run, user, &rec, err, errlen);
	if (r) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		goto free_spec;
	}
	r = rules_load(&run, &out->e, dg);
	if (r) {
		snprintf(err, errlen,
			 rec.recorded && !user->n_profiles
			     ? "the rules the recording names cannot be loaded here (above); "
			       "--profile replays others"
			     : "the rules cannot be loaded");
		goto free_spec;
	}
	if (!rec.recorded) {
		note(out, "the recording does not say which parameters serve ran with: profile "
			  "defaults");
	} else {
		note_profiles(out, user, &rec);
		note_params(out, user, &rec);
		if (rec.t_ms > at) {
			char a[40];

			/* the polls before it: an older rocewatch's, upgraded on the next start */
			rec_format_time(rec.t_ms, a, sizeof(a));
			note(out,
			     "the recording says which rules serve ran only from %s on: the polls "
			     "before it are replayed with those too",
			     a);
		}
		if (rec.changed_ms) {
			char a[40], b[40];

			rec_format_time(rec.changed_ms, a, sizeof(a));
			rec_format_time(rec.t_ms, b, sizeof(b));
			note(out,
			     "serve ran other rules from %s (a reload or a restart): this replay "
			     "runs those recorded at %s throughout",
			     a, b);
		}
	}
	list_params(out, user, &rec);
free_spec:
	rules_spec_free(&run);
free_rec:
	rec_rules_free(&rec);
	return r;
}

void replay_rules_free(struct replay_rules *rr)
{
	for (size_t i = 0; i < rr->n_notes; i++)
		free(rr->notes[i]);
	free(rr->notes);
	free(rr->params);
	rules_free(rr->e);
	memset(rr, 0, sizeof(*rr));
}
