// SPDX-License-Identifier: MIT
/*
 * A job's NCCL settings against the node model (nccl.h), read the way
 * NCCL's code reads them.  Sources, NVIDIA/nccl at the tags named:
 *
 *   lists      parseStringList(), matchIfList() in src/misc/utils.cc; the
 *              '^' and '=' prefixes in ncclIbInit() (src/transport/net_ib.cc,
 *              to 2.28) / ncclIbInitDevices() (net_ib/init.cc, 2.29+) and in
 *              findInterfaces() (src/misc/socket.cc; ncclOsFindInterfaces()
 *              in src/os/linux.cc from 2.29).  Up to v2.30.4 the parser walks
 *              characters: "dev:" is port atoi("") = 0 and a name of 64+
 *              characters overruns netIf.prefix[64]; v2.30.7 splits with
 *              strtok_r/strsep: "dev:" is any port, names are cut to 63,
 *              "dev:port:rail:plane" fills the rail and plane fields.  Both
 *              read the port with atoi() over the whole text (nothing cut;
 *              glibc's (int)strtol wraps past the int range), and
 *              matchPort() takes only -1 as any port: -2 is no port.
 *   numbers    ncclLoadParam() (src/misc/param.cc): strtoll(s, NULL, 0), an
 *              empty value or ERANGE gives the default.
 *   IB_TC      ncclIbRtrQp() / ncclIbConnect(): grh.traffic_class is a
 *              uint8_t (the low byte); the default is 0 up to 2.25, -1 from
 *              2.26 ("unset": the communicator's trafficClass, else 0);
 *              2.30.7 tests "unset" on the value cut to an int, 2.26-2.30.4
 *              on the int64_t.  NCCL_IB_GID_INDEX, the old-style numbers of
 *              NCCL_NET_GDR_LEVEL and NCCL_CROSS_NIC land in an int too:
 *              past its range they wrap.
 *   GDR level  ncclGetLevel() (src/graph/paths.cc) over topoPathTypeStr[]
 *              (src/graph/topo.cc): strcmp (case-sensitive), C2C from 2.26,
 *              P2C from 2.27; a value starting with a digit is an old-style
 *              number 0..5 (larger is 5: SYS).
 *   GID        ncclIbGetGidIndex() / ncclUpdateGidIndex() (net_ib.cc;
 *              net_ib/connect.cc from 2.29): NCCL_IB_GID_INDEX >= 0 wins,
 *              else the walk over the table with NCCL_IB_ADDR_FAMILY,
 *              NCCL_IB_ADDR_RANGE and NCCL_IB_ROCE_VERSION_NUM from index 0.
 *   IFNAME     ncclFindInterfaces() (src/misc/socket.cc): a value of one
 *              character is ignored; candidates are interfaces with an IPv4
 *              or non-loopback IPv6 address (lo included), IFF_RUNNING only
 *              from 2.28; NCCL's own pick is "ib", then "^docker,lo"
 *              ("^docker,lo,virbr" from 2.28), then docker, lo (and virbr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "bounded.h"
#include "nccl.h"
#include "util.h"

/* ---- parseStringList() / matchIfList() ---- */

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

/*
 * glibc's atoi() is (int)strtol(s, NULL, 10) over the whole text: blanks and
 * a sign, then digits, the rest ignored; an overflow is LONG_MAX/LONG_MIN
 * and the cast keeps the low 32 bits (4294967297 is 1, 4294967295 and
 * LONG_MAX are -1, LONG_MIN is 0).  Neither parser bounds the text:
 * 2.21.5-2.30.4 call atoi(ptr+1) on the rest of the value, 2.30.7 atoi() on
 * the strsep() token (src/misc/utils.cc parseStringList()), and strtol
 * stops at the ':' or ',' that ends the token either way.  *wrapped: the
 * number does not fit an int (or a long).
 */
static int nccl_atoi(const char *s, bool *wrapped)
{
	long v;

	errno = 0;
	v = strtol(s, NULL, 10);
	*wrapped = errno == ERANGE || v != (long)(int)v;
	return (int)v;
}

static void parse_entry(const char *s, size_t len, size_t max, struct nccl_list *l)
{
	const char *colon = memchr(s, ':', len), *port, *pend;
	size_t nlen = colon ? (size_t)(colon - s) : len, plen;
	struct nccl_list_entry *e;
	bool wrapped;

	if (!nlen) {
		/* ":1": parseStringList skips an entry without a name */
		l->notes |= NCCL_LN_EMPTY_ENTRY;
		return;
	}
	if (l->n == max) {
		/* the loop stops at maxList: this entry and the rest are not read */
		if (!(l->notes & NCCL_LN_DROPPED))
			snprintf(l->dropped, sizeof(l->dropped), "%.*s",
				 (int)(len < NCCL_PREFIX_MAX - 1 ? len : NCCL_PREFIX_MAX - 1), s);
		l->notes |= NCCL_LN_DROPPED;
		return;
	}
	e = &l->e[l->n++];
	e->long_name = nlen >= NCCL_PREFIX_MAX;
	if (e->long_name) {
		l->notes |= NCCL_LN_LONG;
		nlen = NCCL_PREFIX_MAX - 1;
	}
	memcpy(e->name, s, nlen);
	e->name[nlen] = '\0';
	e->port = e->port_old = -1;
	if (!colon)
		return;
	port = colon + 1;
	pend = memchr(port, ':', len - (size_t)(port - s));
	plen = pend ? (size_t)(pend - port) : len - (size_t)(port - s);
	if (!plen) {
		e->port_old = 0;
		l->notes |= NCCL_LN_EMPTY_PORT;
		return;
	}
	e->port = e->port_old = nccl_atoi(port, &wrapped);
	e->odd_port = wrapped || !all_digits(port, plen);
	if (e->odd_port)
		l->notes |= NCCL_LN_ODD_PORT;
}

void nccl_list_parse(const char *s, size_t max, struct nccl_list *l)
{
	memset(l, 0, sizeof(*l));
	if (max > NCCL_LIST_MAX)
		max = NCCL_LIST_MAX;
	if (!s)
		return;
	if (*s == '^') {
		l->exclude = true;
		s++;
	}
	if (*s == '=') {
		l->exact = true;
		s++;
	}
	while (*s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);

		if (len)
			parse_entry(s, len, max, l);
		else
			l->notes |= NCCL_LN_EMPTY_ENTRY;
		if (!end)
			break;
		s = end + 1;
		if (!*s)
			l->notes |= NCCL_LN_EMPTY_ENTRY;
	}
}

/* matchIf(): exact compares strlen(name) + 1 bytes; else ref is a prefix of name. */
static bool match_if(const char *name, const char *ref, bool exact)
{
	return exact ? !strcmp(name, ref) : !strncmp(name, ref, strlen(ref));
}

bool nccl_list_selects(const struct nccl_list *l, const char *name, int port, bool old)
{
	/* matchIfList(): "an exception for the case where no user list is defined" */
	bool any = l->n == 0;

	for (size_t i = 0; i < l->n && !any; i++) {
		int p = old ? l->e[i].port_old : l->e[i].port;

		/* matchPort(): -1 alone is "any port"; -2 or 0 matches no port NCCL has */
		any =
		    match_if(name, l->e[i].name, l->exact) && (port == -1 || p == -1 || p == port);
	}
	return any != l->exclude;
}

/* ---- ncclLoadParam() ---- */

int64_t nccl_load_param(const char *s, int64_t deflt, enum nccl_num_note *note)
{
	const char *p;
	char *end;
	long long v;

	*note = NCCL_NUM_PLAIN;
	if (!s)
		return deflt;
	if (!*s) {
		*note = NCCL_NUM_DEFAULT;
		return deflt;
	}
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno == ERANGE) {
		*note = NCCL_NUM_RANGE;
		return deflt;
	}
	if (end == s) {
		*note = NCCL_NUM_NOT_NUM;
		return 0;
	}
	p = s + strspn(s, " \t\n\v\f\r");
	if (*p == '+' || *p == '-')
		p++;
	if (*end)
		*note = NCCL_NUM_TRAILING;
	else if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		*note = NCCL_NUM_HEX;
	else if (p[0] == '0' && p[1])
		*note = NCCL_NUM_OCTAL;
	return v;
}

/* ---- ncclGetLevel() ---- */

static const struct {
	const char *name;
	int since; /* NCCL 2.<since> */
} path_names[NCCL__PATHS] = {
	[NCCL_PATH_LOC] = { "LOC", 21 }, [NCCL_PATH_NVL] = { "NVL", 21 },
	[NCCL_PATH_NVB] = { "NVB", 21 }, [NCCL_PATH_C2C] = { "C2C", 26 },
	[NCCL_PATH_PIX] = { "PIX", 21 }, [NCCL_PATH_PXB] = { "PXB", 21 },
	[NCCL_PATH_P2C] = { "P2C", 27 }, [NCCL_PATH_PXN] = { "PXN", 21 },
	[NCCL_PATH_PHB] = { "PHB", 21 }, [NCCL_PATH_SYS] = { "SYS", 21 },
};

const char *nccl_path_name(enum nccl_path p)
{
	return p < NCCL__PATHS ? path_names[p].name : "?";
}

int nccl_gdr_level(const char *s, int *since, bool *numeric)
{
	/* levelsOldToNew[]: the numbers of NCCL before 2.4 */
	static const enum nccl_path old[] = { NCCL_PATH_LOC, NCCL_PATH_PIX, NCCL_PATH_PXB,
					      NCCL_PATH_PHB, NCCL_PATH_SYS, NCCL_PATH_SYS };
	int v;

	*since = 21;
	*numeric = false;
	for (int i = 0; i < NCCL__PATHS; i++)
		if (!strcmp(s, path_names[i].name)) {
			*since = path_names[i].since;
			return i;
		}
	if (s[0] < '0' || s[0] > '9')
		return -1;
	*numeric = true;
	/*
	 * "int oldLevel = strtol(str, NULL, 0)", clamped from above only
	 * (src/graph/paths.cc:269-272 at v2.30.7, :237-240 at v2.21.5): the
	 * long is cut to an int, so 4294967296 is 0 (LOC) and 2147483648 a
	 * negative index into levelsOldToNew[]
	 */
	v = (int)strtol(s, NULL, 0);
	if (v < 0)
		return -2;
	return (int)old[v > 5 ? 5 : v];
}

/* ---- the job's environment ---- */

static const char *const var_names[NCCL__VARS] = {
	[NCCL_IB_HCA] = "NCCL_IB_HCA",
	[NCCL_SOCKET_IFNAME] = "NCCL_SOCKET_IFNAME",
	[NCCL_IB_GID_INDEX] = "NCCL_IB_GID_INDEX",
	[NCCL_IB_TC] = "NCCL_IB_TC",
	[NCCL_IB_DISABLE] = "NCCL_IB_DISABLE",
	[NCCL_NET_GDR_LEVEL] = "NCCL_NET_GDR_LEVEL",
	[NCCL_CROSS_NIC] = "NCCL_CROSS_NIC",
	[NCCL_IB_ADDR_FAMILY] = "NCCL_IB_ADDR_FAMILY",
	[NCCL_IB_ADDR_RANGE] = "NCCL_IB_ADDR_RANGE",
	[NCCL_IB_ROCE_VERSION_NUM] = "NCCL_IB_ROCE_VERSION_NUM",
	[NCCL_SOCKET_FAMILY] = "NCCL_SOCKET_FAMILY",
	[NCCL_NET] = "NCCL_NET",
	[NCCL_NET_PLUGIN] = "NCCL_NET_PLUGIN",
	[NCCL_IB_MERGE_NICS] = "NCCL_IB_MERGE_NICS",
	[NCCL_IB_MERGE_VFS] = "NCCL_IB_MERGE_VFS",
	[NCCL_IB_FIFO_TC] = "NCCL_IB_FIFO_TC",
	[NCCL_DEBUG] = "NCCL_DEBUG",
	[NCCL_ALGO] = "NCCL_ALGO",
	[NCCL_PROTO] = "NCCL_PROTO",
	[NCCL_NET_MERGE_LEVEL] = "NCCL_NET_MERGE_LEVEL",
	[NCCL_NET_FORCE_MERGE] = "NCCL_NET_FORCE_MERGE",
	[NCCL_IB_DATA_DIRECT] = "NCCL_IB_DATA_DIRECT",
	[NCCL_COMM_ID] = "NCCL_COMM_ID",
	[NCCL_NETDEVS_POLICY] = "NCCL_NETDEVS_POLICY",
};

const char *nccl_var_name(enum nccl_var v)
{
	return v < NCCL__VARS ? var_names[v] : "?";
}

bool nccl_var_reported(enum nccl_var v)
{
	return v <= NCCL_CROSS_NIC;
}

int nccl_env_put(struct nccl_env *env, const char *key, const char *val)
{
	for (int v = 0; v < NCCL__VARS; v++) {
		char *copy;

		if (strcmp(key, var_names[v]))
			continue;
		copy = strdup(val);
		if (!copy)
			return -ENOMEM;
		free(env->val[v]);
		env->val[v] = copy;
		env->set[v] = true;
	}
	return 0;
}

const char *nccl_note(const struct nccl_reading *r)
{
	return r->note.buf ? r->note.buf : "";
}

/* Every reading back to nothing, its note's memory given back. */
static void readings_reset(struct nccl_env *env)
{
	for (int v = 0; v < NCCL__VARS; v++)
		sb_free(&env->out[v].note);
	memset(env->out, 0, sizeof(env->out));
}

void nccl_env_free(struct nccl_env *env)
{
	for (int v = 0; v < NCCL__VARS; v++) {
		free(env->val[v]);
		env->val[v] = NULL;
		env->set[v] = false;
	}
	readings_reset(env);
}

int nccl_env_from_environ(struct nccl_env *env, char **envp)
{
	env->given = true;
	for (char **p = envp; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		char key[64];

		if (!eq || strncmp(*p, "NCCL_", 5) || (size_t)(eq - *p) >= sizeof(key))
			continue;
		memcpy(key, *p, (size_t)(eq - *p));
		key[eq - *p] = '\0';
		if (nccl_env_put(env, key, eq + 1))
			return -ENOMEM;
	}
	return 0;
}

static bool is_key(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

int nccl_env_read_file(struct nccl_env *env, const char *path, char *err, size_t errlen)
{
	char *buf, *line, *next, why[160];
	size_t len = 0;
	int r = read_file_max(path, RW_MAX_NCCL_ENV_BYTES, &buf, &len), lineno = 0;
	const char *nul;

	if (r) {
		snprintf(err, errlen, "%s: %s", path,
			 read_error_text(r, RW_MAX_NCCL_ENV_BYTES, "an --nccl-env file", why,
					 sizeof(why)));
		return r;
	}
	/* a NUL would end the text early and silently hide every line after it */
	nul = memchr(buf, '\0', len);
	if (nul) {
		const char *bol = buf;

		for (const char *p = buf; p < nul; p++)
			if (*p == '\n')
				lineno++, bol = p + 1;
		snprintf(err, errlen, "%s:%d:%d: a NUL byte: not a text file of KEY=VALUE lines",
			 path, lineno + 1, (int)(nul - bol) + 1);
		free(buf);
		return -EINVAL;
	}
	env->given = true;
	for (line = buf; line; line = next) {
		char *eq, *val, *end;
		size_t vlen;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t");
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = '\0';
		if (!*line || *line == '#')
			continue;
		if (!strncmp(line, "export", 6) && (line[6] == ' ' || line[6] == '\t'))
			line += 6 + strspn(line + 6, " \t");
		eq = strchr(line, '=');
		if (!eq || !is_key(line, (size_t)(eq - line))) {
			char shown[256];

			/* the line goes to the terminal: control bytes escaped */
			snprintf(err, errlen, "%s:%d: expected KEY=VALUE, got '%.60s'", path,
				 lineno, text_escape_ctl(line, shown, sizeof(shown)));
			r = -EINVAL;
			break;
		}
		*eq = '\0';
		val = eq + 1;
		vlen = strlen(val);
		/* a shell-quoted value, as `env` or a job script writes it */
		if (vlen >= 2 && (val[0] == '"' || val[0] == '\'') && val[vlen - 1] == val[0]) {
			val[vlen - 1] = '\0';
			val++;
		} else if (vlen && (val[0] == '"' || val[0] == '\'')) {
			snprintf(err, errlen, "%s:%d: %s: unterminated quote", path, lineno, line);
			r = -EINVAL;
			break;
		}
		if (nccl_env_put(env, line, val)) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, strerror(ENOMEM));
			r = -ENOMEM;
			break;
		}
	}
	free(buf);
	return r;
}

/* ---- the node's IP addresses, as getifaddrs() shows them to NCCL ---- */

int nccl_ifaddrs_read(struct nccl_ifaddrs *ifs)
{
	struct ifaddrs *all;
	size_t cap = 0;
	int r = 0;

	memset(ifs, 0, sizeof(*ifs));
	if (getifaddrs(&all))
		return -errno;
	for (struct ifaddrs *a = all; a; a = a->ifa_next) {
		struct nccl_ifaddr *e;
		int fam;

		if (!a->ifa_addr || !a->ifa_name)
			continue;
		fam = a->ifa_addr->sa_family;
		if (fam != AF_INET && fam != AF_INET6)
			continue;
		/* NCCL skips IPv6 loopback addresses (lo stays a candidate by 127.0.0.1) */
		if (fam == AF_INET6 &&
		    IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr))
			continue;
		if (ifs->n == cap) {
			size_t ncap = cap ? 2 * cap : 16;

			e = realloc(ifs->e, ncap * sizeof(*e));
			if (!e) {
				r = -ENOMEM;
				break;
			}
			ifs->e = e;
			cap = ncap;
		}
		e = &ifs->e[ifs->n++];
		memset(e, 0, sizeof(*e));
		strlcpy0(e->name, a->ifa_name, sizeof(e->name));
		e->family = fam;
		e->running = (a->ifa_flags & IFF_RUNNING) != 0;
	}
	freeifaddrs(all);
	if (r)
		nccl_ifaddrs_free(ifs);
	return r;
}

void nccl_ifaddrs_free(struct nccl_ifaddrs *ifs)
{
	free(ifs->e);
	ifs->e = NULL;
	ifs->n = 0;
}

/* ---- judging ---- */

static void set_problem(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_problem(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (buf[0])
		return; /* the first problem found is the one reported */
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* Add a sentence to v's note; warn: NCCL reads the value differently from how it looks. */
static void note(struct nccl_env *env, enum nccl_var v, bool warn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void note(struct nccl_env *env, enum nccl_var v, bool warn, const char *fmt, ...)
{
	struct nccl_reading *r = &env->out[v];
	va_list ap;

	if (r->note.len)
		sb_puts(&r->note, "; ");
	va_start(ap, fmt);
	sb_vprintf(&r->note, fmt, ap);
	va_end(ap);
	r->warn |= warn;
}

static void add_item(struct nccl_reading *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_item(struct nccl_reading *r, const char *fmt, ...)
{
	va_list ap;

	if (r->n == NCCL_LIST_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(r->items[r->n++], NCCL_ITEM_MAX, fmt, ap);
	va_end(ap);
}

static const char *str_or(const struct object *o, enum field_id id, const char *dflt)
{
	return field_present(o, id) ? o->f[id].v.s : dflt;
}

/* ncclLoadParam() of v, with a note where NCCL's reading is not what the value shows. */
static int64_t load_var(struct nccl_env *env, enum nccl_var v, int64_t deflt)
{
	const char *s = env->val[v], *name = var_names[v];
	enum nccl_num_note n;
	int64_t x = nccl_load_param(s, deflt, &n);
	char *end;

	switch (n) {
	case NCCL_NUM_DEFAULT:
		note(env, v, false, "%s is empty: NCCL uses its default, %lld", name,
		     (long long)deflt);
		break;
	case NCCL_NUM_OCTAL:
		note(env, v, true, "%s=%.40s is read as %lld (octal)", name, s, (long long)x);
		break;
	case NCCL_NUM_TRAILING:
		(void)strtoll(s, &end, 0);
		note(env, v, true, "%s=%.40s is read as %lld (strtoll stops at '%c')", name, s,
		     (long long)x, *end);
		break;
	case NCCL_NUM_NOT_NUM:
		note(env, v, true, "%s=%.40s is not a number: NCCL reads 0", name, s);
		break;
	case NCCL_NUM_RANGE:
		note(env, v, true, "%s=%.40s is out of range: NCCL uses its default, %lld", name, s,
		     (long long)deflt);
		break;
	case NCCL_NUM_PLAIN:
	case NCCL_NUM_HEX:
		break;
	}
	return x;
}

/* The parser's surprises, common to NCCL_IB_HCA and NCCL_SOCKET_IFNAME. */
static void list_notes(struct nccl_env *env, enum nccl_var v, const struct nccl_list *l, size_t max)
{
	const char *name = var_names[v];

	for (size_t i = 0; i < l->n; i++) {
		const struct nccl_list_entry *e = &l->e[i];

		/* matchPort() (utils.cc:224 at v2.30.7, :175 at v2.21.5): only -1 is any */
		if (e->odd_port)
			note(env, v, true, "%s: the port of %.40s is read as %d (atoi)%s", name,
			     e->name, e->port,
			     e->port == -1  ? ", which is any port"
			     : e->port < -1 ? ", which matches no port: the entry selects nothing"
					    : "");
		if (e->port < 0 && e->port_old == 0)
			note(env, v, true,
			     "%s: %.40s with an empty port is any port from NCCL 2.30.7, port 0 "
			     "(none) up to 2.30.4",
			     name, e->name);
	}
	if (l->notes & NCCL_LN_LONG)
		note(env, v, true,
		     "%s: a name of %d or more characters: NCCL 2.30.7 keeps its first %d, "
		     "2.30.4 and older overrun their %d-byte buffer",
		     name, NCCL_PREFIX_MAX, NCCL_PREFIX_MAX - 1, NCCL_PREFIX_MAX);
	if (l->notes & NCCL_LN_DROPPED)
		note(env, v, true,
		     "%s: NCCL reads the first %zu entries; %.40s and after are ignored", name, max,
		     l->dropped);
}

static bool port_active(const struct object *p)
{
	return !strcmp(str_or(p, F_PORT_STATE, ""), "ACTIVE");
}

static bool port_roce(const struct object *p)
{
	return !strcmp(str_or(p, F_PORT_LINK_LAYER, ""), "Ethernet");
}

/* Is w one of the space-separated words of buf (eth1 is not in "eth10")? */
static bool has_word(const char *buf, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = buf; (p = strstr(p, w)); p += n)
		if ((p == buf || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static void append_word(char *buf, size_t size, const char *w)
{
	size_t len = strlen(buf);

	if (!w[0] || has_word(buf, w) || len + strlen(w) + 2 >= size)
		return;
	snprintf(buf + len, size - len, "%s%s", len ? " " : "", w);
}

/*
 * NCCL's PCI path of a port's device as ncclIbGetPciPath() cuts it
 * (net_ib/init.cc:60-80 at v2.30.7, net_ib.cc:315-334 at v2.21.5): the
 * function digit zeroed, so the functions of a multi-port card are one
 * device, and with NCCL_IB_MERGE_VFS (default 1, compared with 0) the
 * device digits too, so are its VFs.  The PCI function is the netdev's
 * bus address (ethtool bus-info), "dddd:bb:dd.f"; false where rocewatch
 * does not know it (no netdev, a bond, a snapshot without ethtool).
 */
static bool pci_key(const struct object *p, bool merge_vfs, char *key, size_t size)
{
	const char *bus = p->netdev ? str_or(p->netdev, F_NETDEV_BUS, "") : "";
	size_t n = strlen(bus);

	if (n < 7 || n >= size || bus[n - 2] != '.' || bus[n - 5] != ':')
		return false;
	memcpy(key, bus, n + 1);
	key[n - 1] = '0';
	if (merge_vfs)
		key[n - 3] = key[n - 4] = '0';
	return true;
}

/* The full PCI function of a port's netdev ("0000:41:00.1"), or NULL. */
static const char *port_bus(const struct object *p)
{
	const char *bus = p->netdev ? str_or(p->netdev, F_NETDEV_BUS, "") : "";

	return strlen(bus) >= 7 ? bus : NULL;
}

/* Does a come before b in the node's rail order (PCI address, then port; pci: all known)? */
static bool rail_before(const struct object *a, const struct object *b, bool pci)
{
	int c = pci ? strcmp(port_bus(a), port_bus(b)) : 0;

	if (!c)
		c = strcmp(a->name, b->name);
	return c < 0 || (!c && a->port < b->port);
}

/* job_port_rail() with the `rail` row looked up already (-1: the model has none). */
static void port_rail(const struct node_model *m, const struct object *p, int rail_id, char *buf,
		      size_t n)
{
	size_t pos = 0;
	bool pci = true;

	if (rail_id >= 0 && fields[rail_id].type == VT_STR && field_present(p, rail_id)) {
		snprintf(buf, n, "%s", p->f[rail_id].v.s);
		return;
	}
	for (size_t i = 0; i < m->n_ports && pci; i++)
		pci = port_bus(m->ports[i]) != NULL;
	for (size_t i = 0; i < m->n_ports; i++)
		pos += m->ports[i] != p && rail_before(m->ports[i], p, pci);
	snprintf(buf, n, "%zu", pos);
}

void nccl_fields_read(bool used[F__COUNT])
{
	static const enum field_id read[] = {
		F_PORT_NETDEV, F_PORT_STATE,	   F_PORT_LINK_LAYER, F_PORT_GIDS,
		F_NETDEV_BUS,  F_NETDEV_CARRIER,   F_NETDEV_DSCP_MAP, F_NETDEV_IPV4,
		F_NETDEV_KIND, F_NETDEV_OPERSTATE, F_NETDEV_TRUST,    F_NODE_GPU_NIC_PATHS,
	};
	int rail = field_lookup(OBJ_RDMA_PORT, "rail");

	for (size_t i = 0; i < ARRAY_SIZE(read); i++)
		used[read[i]] = true;
	if (rail >= 0)
		used[rail] = true;
}

void job_port_rail(const struct node_model *m, const struct object *p, char *buf, size_t n)
{
	port_rail(m, p, field_lookup(OBJ_RDMA_PORT, "rail"), buf, n);
}

/* NICs of fused ports: at most NCCL_NET_MAX_DEVS_PER_NIC (8 from 2.30) each. */
#define NCCL_FUSE_MAX 8

struct nccl_nic {
	size_t port[NCCL_FUSE_MAX]; /* indexes into m->ports */
	size_t n;
	bool known; /* key is its PCI device */
	char key[RW_NAME_MAX];
};

/*
 * The device list NCCL builds from the kept ports (sel): with
 * NCCL_IB_MERGE_NICS (default 1) the ports of one PCI device of one link
 * layer are fused into one NIC, "mlx5_0:1+mlx5_1:1".  2.24 and later fuse
 * in the topology (ncclTopoAutoMerge(), src/graph/topo.cc:1375-1440 at
 * v2.30.7: each port with those at most NCCL_NET_MERGE_LEVEL apart,
 * default PORT, topo.cc:1744; up to 8 ports from 2.30, 4 before,
 * topo.cc:1870) and ncclIbMakeVDeviceInternal() refuses when
 * NCCL_IB_MERGE_NICS is 0 (net_ib/init.cc:198) or the link layers differ
 * (:250); 2.21-2.23 fuse in ncclIbInit() by ncclIbFindMatchingDev()
 * (net_ib.cc:371-387 at v2.21.5: the same PCI path, system image GUID and
 * link layer, NCCL_IB_MAX_DEVS_PER_NIC = 2), and 2.22-2.23 undo all
 * fusion when the NICs are not all of one size (net_ib.cc:547-557 at
 * v2.22.3).  The reading is 2.30.7's; the note names the rest.
 */
static void fuse_nics(struct nccl_env *env, struct node_model *m, const bool *sel)
{
	struct nccl_reading *r = &env->out[NCCL_IB_HCA];
	struct nccl_nic nics[NCCL_IB_HCA_MAX];
	int64_t merge = load_var(env, NCCL_IB_MERGE_NICS, 1);
	int64_t vfs = load_var(env, NCCL_IB_MERGE_VFS, 1);
	char fused[512] = "", unknown[256] = "";
	size_t n = 0, kept = 0, largest = 0;
	bool pairs = false, singles = false;

	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *p = m->ports[i];
		struct nccl_nic *nic = NULL;
		char key[RW_NAME_MAX];
		bool known;

		if (!sel[i])
			continue;
		kept++;
		known = pci_key(p, vfs != 0, key, sizeof(key));
		if (!known)
			append_word(unknown, sizeof(unknown), p->name);
		for (size_t k = 0; known && k < n && !nic; k++) {
			const struct object *q = m->ports[nics[k].port[0]];

			if (nics[k].known && !strcmp(nics[k].key, key) &&
			    nics[k].n < NCCL_FUSE_MAX &&
			    !strcmp(str_or(p, F_PORT_LINK_LAYER, ""),
				    str_or(q, F_PORT_LINK_LAYER, "")))
				nic = &nics[k];
		}
		if (!nic) {
			nic = &nics[n++];
			memset(nic, 0, sizeof(*nic));
			nic->known = known;
			if (known)
				strlcpy0(nic->key, key, sizeof(nic->key));
		}
		nic->port[nic->n++] = i;
	}
	r->n = 0;
	for (size_t i = 0; i < m->n_ports; i++)
		field_set_int(m->ports[i], F_PORT_JOB_HCA_INDEX, -1);
	for (size_t k = 0; k < n; k++) {
		const struct nccl_nic *nic = &nics[k];
		char name[NCCL_ITEM_MAX] = "";
		size_t len = 0;

		for (size_t j = 0; j < nic->n && len < sizeof(name); j++) {
			const struct object *p = m->ports[nic->port[j]];

			len += (size_t)snprintf(name + len, sizeof(name) - len, "%s%s:%u",
						j ? "+" : "", p->name, p->port);
		}
		if (nic->n > 1)
			append_word(fused, sizeof(fused), name);
		/* NCCL_IB_MERGE_NICS=0: each port a NIC of its own */
		for (size_t j = 0; !merge && nic->n > 1 && j < nic->n; j++) {
			field_set_int(m->ports[nic->port[j]], F_PORT_JOB_HCA_INDEX, (int64_t)r->n);
			add_item(r, "%s:%u", m->ports[nic->port[j]]->name,
				 m->ports[nic->port[j]]->port);
		}
		if (merge || nic->n == 1) {
			/* NCCL's device index: its place in the list NCCL builds */
			for (size_t j = 0; j < nic->n; j++)
				field_set_int(m->ports[nic->port[j]], F_PORT_JOB_HCA_INDEX,
					      (int64_t)r->n);
			add_item(r, "%s", name);
		}
		if (nic->n > largest)
			largest = nic->n;
		/* what 2.22-2.23 make of it, 2 ports a NIC at most */
		pairs |= nic->n >= 2;
		singles |= nic->n % 2 == 1;
	}
	if (fused[0] && merge) {
		note(env, NCCL_IB_HCA, false,
		     "NCCL fuses the ports of one PCI device into one NIC (NCCL_IB_MERGE_NICS, "
		     "default 1): %s",
		     fused);
		if (largest > 2)
			note(env, NCCL_IB_HCA, false, "NCCL 2.21-2.23 fuse 2 ports at most%s",
			     largest > 4 ? ", 2.24-2.29 4" : "");
		if (pairs && singles)
			note(env, NCCL_IB_HCA, false,
			     "NCCL 2.22 and 2.23 fuse none, the NICs not being all of one size");
	} else if (fused[0]) {
		note(
		    env, NCCL_IB_HCA, false,
		    "NCCL_IB_MERGE_NICS=0: %s share a PCI device and stay separate NICs (NCCL 2.24 "
		    "and later log that fusing them failed)",
		    fused);
	}
	if (merge && unknown[0] && kept > 1)
		note(env, NCCL_IB_HCA, false,
		     "rocewatch does not know the PCI device of %s (no PCI address on its netdev): "
		     "NCCL fuses it with any other port of that device",
		     unknown);
	if (merge && env->val[NCCL_NET_MERGE_LEVEL])
		note(
		    env, NCCL_IB_HCA, false,
		    "NCCL_NET_MERGE_LEVEL=%.20s: NCCL 2.24 and later fuse NICs up to that PCI "
		    "distance apart, which rocewatch does not judge (it fuses the ports of one PCI "
		    "device, the default PORT)",
		    env->val[NCCL_NET_MERGE_LEVEL]);
	if (env->val[NCCL_NET_FORCE_MERGE])
		note(env, NCCL_IB_HCA, false,
		     "NCCL_NET_FORCE_MERGE=%.40s: NCCL 2.24 and later fuse those NICs first, which "
		     "rocewatch does not judge",
		     env->val[NCCL_NET_FORCE_MERGE]);
	field_set_int(&m->node, F_JOB_HCA_COUNT, (int64_t)r->n);
	env->out[NCCL_IB_MERGE_NICS].kind = NCCL_EFF_INT;
	env->out[NCCL_IB_MERGE_NICS].num = merge;
	env->out[NCCL_IB_MERGE_VFS].kind = NCCL_EFF_INT;
	env->out[NCCL_IB_MERGE_VFS].num = vfs;
}

/*
 * NCCL_IB_HCA: the ports ncclIbInit[Devices]() keeps (ACTIVE, InfiniBand or
 * Ethernet, matching the list, at most MAX_IB_DEVS) in sel and in the reading.
 */
static void judge_ib_hca(struct nccl_env *env, struct node_model *m, bool *sel)
{
	struct nccl_reading *r = &env->out[NCCL_IB_HCA];
	const char *v = env->val[NCCL_IB_HCA];
	char prob[RW_STR_MAX] = "";
	struct nccl_list l;
	size_t kept = 0;

	nccl_list_parse(v, NCCL_IB_HCA_MAX, &l);
	r->kind = NCCL_EFF_LIST;
	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *p = m->ports[i];
		const char *ll = str_or(p, F_PORT_LINK_LAYER, "");

		sel[i] = nccl_list_selects(&l, p->name, (int)p->port, false) && port_active(p) &&
			 (!strcmp(ll, "Ethernet") || !strcmp(ll, "InfiniBand")) &&
			 kept < NCCL_IB_HCA_MAX;
		kept += sel[i];
	}
	fuse_nics(env, m, sel);
	field_set_str(&m->node, F_JOB_IB_HCA, v ? v : "");
	if (!v || !v[0]) {
		/* unset or empty: parseStringList() finds no entry, every port is used */
		field_set_str(&m->node, F_JOB_IB_HCA_PROBLEM, "");
		return;
	}
	list_notes(env, NCCL_IB_HCA, &l, NCCL_IB_HCA_MAX);
	if (l.exclude && !l.n)
		/* matchIfList() of an empty list is true, and '^' inverts it */
		set_problem(prob, sizeof(prob), "\"%.8s\" excludes every port: NCCL finds no HCA",
			    v);
	/* an include list naming what is not there is a typo or a missing device */
	for (size_t k = 0; !l.exclude && k < l.n; k++) {
		struct nccl_list one = l;
		bool found = false;

		one.n = 1;
		one.e[0] = l.e[k];
		for (size_t i = 0; i < m->n_ports && !found; i++)
			found = nccl_list_selects(&one, m->ports[i]->name, (int)m->ports[i]->port,
						  false);
		if (!found && l.e[k].port != -1)
			set_problem(prob, sizeof(prob), "%.30s:%d: no such RDMA port", l.e[k].name,
				    l.e[k].port);
		else if (!found)
			set_problem(prob, sizeof(prob), "%.30s: no such RDMA device", l.e[k].name);
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *p = m->ports[i];

		if (!nccl_list_selects(&l, p->name, (int)p->port, false))
			continue;
		if (!port_active(p))
			/* NCCL skips the port: the job runs on fewer rails */
			set_problem(prob, sizeof(prob), "%s:%u is %s", p->name, p->port,
				    str_or(p, F_PORT_STATE, "unknown"));
		else if (!port_roce(p))
			set_problem(prob, sizeof(prob), "%s:%u is %s, not RoCE", p->name, p->port,
				    str_or(p, F_PORT_LINK_LAYER, "unknown"));
	}
	if (!kept)
		set_problem(prob, sizeof(prob), "selects no RDMA port of this node");
	field_set_str(&m->node, F_JOB_IB_HCA_PROBLEM, prob);
}

/* Names a job should not bootstrap over: loopback, containers' bridges, virtual links. */
static bool virtual_name(const char *name)
{
	static const char *const prefixes[] = { "lo",  "docker",  "virbr", "veth", "br-",
						"cni", "flannel", "cali",  "vxlan" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static bool virtual_kind(const char *kind)
{
	static const char *const kinds[] = { "veth", "bridge", "vxlan", "dummy", "tun", "macvtap" };

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

/* The family NCCL_SOCKET_FAMILY forces (ncclEnvSocketFamily / envSocketFamily), -1: any. */
static int socket_family(const char *s)
{
	if (s && !strcmp(s, "AF_INET"))
		return AF_INET;
	if (s && !strcmp(s, "AF_INET6"))
		return AF_INET6;
	return -1;
}

static bool has_item(const struct nccl_reading *r, const char *item)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->items[i], item))
			return true;
	return false;
}

/*
 * ncclOsFindInterfaces() (src/os/linux.cc:394-440 at v2.30.7; findInterfaces()
 * in src/misc/socket.cc:115-156 at v2.21.5) over ifs: each address in
 * getifaddrs() order, skipped when not of the family forced (sock_family),
 * when its interface is not running (2.28 and later: running) or not in the
 * list; an interface is named at its first address that passes, once.  With
 * AF_INET6 that is the order of the IPv6 addresses, not of the interfaces'
 * first addresses.
 */
static size_t find_ifs(const struct nccl_ifaddrs *ifs, const char *list, int fam, bool running,
		       struct nccl_reading *r)
{
	struct nccl_list l;

	nccl_list_parse(list, NCCL_IFS_MAX, &l);
	r->n = 0;
	for (size_t i = 0; i < ifs->n && r->n < NCCL_IFS_MAX; i++) {
		const struct nccl_ifaddr *e = &ifs->e[i];

		if ((e->family != AF_INET && e->family != AF_INET6) ||
		    (fam != -1 && e->family != fam) || (running && !e->running))
			continue;
		if (nccl_list_selects(&l, e->name, -1, false) && !has_item(r, e->name))
			add_item(r, "%s", e->name);
	}
	return r->n;
}

/* ncclFindInterfaces() without NCCL_SOCKET_IFNAME (NCCL_COMM_ID's subnet match aside). */
static size_t auto_ifs(const struct nccl_ifaddrs *ifs, int fam, bool new, struct nccl_reading *r)
{
	if (find_ifs(ifs, "ib", fam, new, r) ||
	    find_ifs(ifs, new ? "^docker,lo,virbr" : "^docker,lo", fam, new, r) ||
	    find_ifs(ifs, "docker", fam, new, r) || find_ifs(ifs, "lo", fam, new, r))
		return r->n;
	return new ? find_ifs(ifs, "virbr", fam, new, r) : 0;
}

/* Without getifaddrs() (a snapshot): the model's netdevs, IPv4 only, lo not among them. */
static int ifs_from_model(const struct node_model *m, struct nccl_ifaddrs *ifs)
{
	ifs->n = 0;
	ifs->e = calloc(m->n_netdevs ? m->n_netdevs : 1, sizeof(*ifs->e));
	if (!ifs->e)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_netdevs; i++) {
		const struct object *nd = m->netdevs[i];
		const char *op = str_or(nd, F_NETDEV_OPERSTATE, "");
		struct nccl_ifaddr *e = &ifs->e[ifs->n];

		if (!str_or(nd, F_NETDEV_IPV4, "")[0])
			continue;
		strlcpy0(e->name, nd->name, sizeof(e->name));
		/* IFF_RUNNING: up with carrier; "unknown" is a dummy or tun that runs */
		e->running = !strcmp(op, "up") ||
			     (!strcmp(op, "unknown") && field_present(nd, F_NETDEV_CARRIER) &&
			      nd->f[F_NETDEV_CARRIER].v.i);
		e->family = AF_INET;
		ifs->n++;
	}
	return 0;
}

static const struct object *netdev_named(const struct node_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_netdevs; i++)
		if (!strcmp(m->netdevs[i]->name, name))
			return m->netdevs[i];
	return NULL;
}

static bool same_items(const struct nccl_reading *a, const struct nccl_reading *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!has_item(b, a->items[i]))
			return false;
	return true;
}

static void judge_socket_ifname(struct nccl_env *env, struct node_model *m)
{
	struct nccl_reading *r = &env->out[NCCL_SOCKET_IFNAME], old = { 0 };
	const char *v = env->val[NCCL_SOCKET_IFNAME];
	char prob[RW_STR_MAX] = "", virt[RW_STR_MAX] = "";
	int fam = socket_family(env->val[NCCL_SOCKET_FAMILY]);
	bool given = v && strlen(v) >= NCCL_IFNAME_MIN_LEN;
	struct nccl_ifaddrs own = { 0 };
	const struct nccl_ifaddrs *ifs = env->ifs;
	struct nccl_list l;

	field_set_str(&m->node, F_JOB_SOCKET_IFNAME, v ? v : "");
	r->kind = NCCL_EFF_LIST;
	if (!ifs) {
		if (ifs_from_model(m, &own)) {
			field_absent(&m->node, F_JOB_SOCKET_IFNAME_PROBLEM, ABS_ERROR, ENOMEM);
			field_absent(&m->node, F_JOB_SOCKET_IFNAME_VIRTUAL, ABS_ERROR, ENOMEM);
			return;
		}
		ifs = &own;
	}
	if (v && v[0] && !given)
		note(env, NCCL_SOCKET_IFNAME, true,
		     "NCCL_SOCKET_IFNAME=%s: NCCL ignores a value of one character and picks "
		     "the interface itself",
		     v);
	if (given) {
		nccl_list_parse(v, NCCL_IFS_MAX, &l);
		list_notes(env, NCCL_SOCKET_IFNAME, &l, NCCL_IFS_MAX);
		find_ifs(ifs, v, fam, true, r);
		find_ifs(ifs, v, fam, false, &old);
	} else {
		memset(&l, 0, sizeof(l));
		auto_ifs(ifs, fam, true, r);
		auto_ifs(ifs, fam, false, &old);
	}
	if (!same_items(r, &old)) {
		char names[256] = "";
		bool superset = true;

		for (size_t i = 0; i < r->n; i++)
			superset &= has_item(&old, r->items[i]);
		for (size_t i = 0; i < old.n; i++)
			if (!superset || !has_item(r, old.items[i]))
				append_word(names, sizeof(names), old.items[i]);
		/* 2.21-2.27 do not test IFF_RUNNING: an interface that is down counts there */
		note(env, NCCL_SOCKET_IFNAME, false,
		     superset
			 ? "NCCL 2.21-2.27 also take %s, which is not running (2.28 and later "
			   "skip it)"
			 : "NCCL 2.21-2.27, which do not skip interfaces that are not running, "
			   "take %s instead",
		     names);
	}
	if (given && !r->n)
		set_problem(prob, sizeof(prob), "selects no running interface with an address");
	for (size_t i = 0; i < r->n; i++) {
		const struct object *nd = netdev_named(m, r->items[i]);

		if (virtual_name(r->items[i]) ||
		    (nd && virtual_kind(str_or(nd, F_NETDEV_KIND, ""))))
			append_word(virt, sizeof(virt), r->items[i]);
	}
	/* lo and docker0 are seldom among the netdevs of a snapshot: judge the names asked for */
	for (size_t k = 0; given && !l.exclude && k < l.n; k++)
		if (virtual_name(l.e[k].name))
			append_word(virt, sizeof(virt), l.e[k].name);
	if (!env->ifs)
		note(env, NCCL_SOCKET_IFNAME, false,
		     "judged from the netdevs rocewatch watches (IPv4 only, lo not among them)");
	nccl_ifaddrs_free(&own);
	field_set_str(&m->node, F_JOB_SOCKET_IFNAME_PROBLEM, prob);
	field_set_str(&m->node, F_JOB_SOCKET_IFNAME_VIRTUAL, virt);
}

/* ---- the GID NCCL uses: ncclIbGetGidIndex() ---- */

struct gid_walk {
	int family;	 /* NCCL_IB_ADDR_FAMILY */
	bool has_prefix; /* NCCL_IB_ADDR_RANGE read */
	uint8_t prefix[16];
	int prefixlen;
	int roce_version; /* NCCL_IB_ROCE_VERSION_NUM */
};

static uint32_t word(const uint8_t *b, int i)
{
	return (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
	       (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
}

/* getGidAddrFamily(): IPv4-mapped (or its multicast form) is AF_INET. */
static int gid_family(const uint8_t *b)
{
	bool mapped = !word(b, 0) && !word(b, 1) && word(b, 2) == 0xffff;
	bool mcast = word(b, 0) == 0xff0e0000 && !word(b, 1) && word(b, 2) == 0xffff;

	return mapped || mcast ? AF_INET : AF_INET6;
}

/* validGid(): configuredGid() && !linkLocalGid() */
static bool gid_valid(const uint8_t *b)
{
	uint32_t trailer = word(b, 1) | word(b, 2) | word(b, 3);

	if (!(word(b, 0) | trailer) || (word(b, 0) == 0xfe800000 && !trailer))
		return false;
	return !(word(b, 0) == 0xfe800000 && !word(b, 1));
}

static uint32_t netmask(int bits)
{
	return bits >= 32 ? 0xffffffffu : ~((1u << (32 - bits)) - 1);
}

/* matchGidAddrPrefix(); no range (NULL prefix, length 0) matches every GID. */
static bool gid_in_range(const struct gid_walk *w, const uint8_t *b)
{
	int len = w->has_prefix ? w->prefixlen : 0;

	for (int i = 0; len > 0 && i < 4;) {
		if (w->family == AF_INET) {
			uint32_t mask = netmask(len);

			if ((word(w->prefix, 0) & mask) != (word(b, 3) & mask))
				break;
			len = 0;
		} else if (len >= 32) {
			if (word(w->prefix, i) != word(b, i))
				break;
			len -= 32;
			i++;
		} else {
			uint32_t mask = netmask(len);

			if ((word(w->prefix, i) & mask) != (word(b, i) & mask))
				break;
			len = 0;
		}
	}
	return len == 0;
}

/* ncclIbRoceGetVersionNum(): what gid_attrs/types/N says; dflt where it says nothing. */
static int gid_version(const struct gid_entry *g, int dflt)
{
	if (!g)
		return dflt;
	if (!strncmp(g->type, "IB/RoCE v1", 10) || !strncmp(g->type, "RoCE v1", 7))
		return 1;
	if (!strncmp(g->type, "RoCE v2", 7))
		return 2;
	return dflt;
}

static const struct gid_entry *gid_at(const struct gid_table *t, uint32_t idx, uint8_t b[16])
{
	memset(b, 0, 16);
	for (size_t k = 0; k < t->n; k++)
		if (t->e[k].index == idx) {
			if (inet_pton(AF_INET6, t->e[k].gid, b) != 1)
				memset(b, 0, 16);
			return &t->e[k];
		}
	return NULL; /* an empty slot reads as the zero GID */
}

/* ncclIbGetGidIndex() for RoCE without NCCL_IB_GID_INDEX: the walk from index 0. */
static uint32_t gid_pick(const struct gid_walk *w, const struct gid_table *t)
{
	uint32_t cur = 0, len = 0;

	for (size_t k = 0; k < t->n; k++)
		if (t->e[k].index + 1 > len)
			len = t->e[k].index + 1;
	for (uint32_t cand = 1; cand < len; cand++) {
		uint8_t g[16], c[16];
		const struct gid_entry *ge = gid_at(t, cur, g), *ce = gid_at(t, cand, c);
		int cfam = gid_family(c);
		bool in = gid_in_range(w, c);

		if (cfam != gid_family(g) && cfam == w->family && in) {
			cur = cand;
			continue;
		}
		if (cfam != w->family || !gid_valid(c) || !in)
			continue;
		if ((gid_version(ge, 0) != gid_version(ce, -1) || !gid_valid(g)) &&
		    gid_version(ce, -1) == w->roce_version)
			cur = cand;
	}
	return cur;
}

/* envIbAddrFamily(), envIbAddrRange() and NCCL_IB_ROCE_VERSION_NUM, with their notes. */
static void gid_walk_read(struct nccl_env *env, struct gid_walk *w)
{
	const char *fam = env->val[NCCL_IB_ADDR_FAMILY], *range = env->val[NCCL_IB_ADDR_RANGE];
	char buf[128], *slash;

	memset(w, 0, sizeof(*w));
	w->family = AF_INET;
	if (fam && !strcmp(fam, "AF_INET6"))
		w->family = AF_INET6;
	else if (fam && fam[0] && strcmp(fam, "AF_INET"))
		note(env, NCCL_IB_ADDR_FAMILY, true,
		     "NCCL_IB_ADDR_FAMILY=%.40s is neither AF_INET nor AF_INET6: NCCL uses AF_INET",
		     fam);
	w->roce_version = (int)load_var(env, NCCL_IB_ROCE_VERSION_NUM, 2);
	if (!range || !range[0])
		return;
	snprintf(buf, sizeof(buf), "%s", range); /* NCCL's addrString[128] */
	slash = strchr(buf, '/');
	if (!slash) {
		note(env, NCCL_IB_ADDR_RANGE, true,
		     "NCCL_IB_ADDR_RANGE=%.40s has no '/': NCCL 2.23 and later ignore it, 2.21 "
		     "and 2.22 crash (NULL dereference in envIbAddrRange)",
		     range);
		return;
	}
	*slash = '\0';
	if (inet_pton(w->family, buf, w->prefix) != 1) {
		note(env, NCCL_IB_ADDR_RANGE, true,
		     "NCCL_IB_ADDR_RANGE=%.40s: '%.40s' is not an %s address: NCCL ignores it",
		     range, buf, w->family == AF_INET ? "AF_INET" : "AF_INET6");
		return;
	}
	w->prefixlen = (int)strtol(slash + 1, NULL, 10);
	if (w->prefixlen > (w->family == AF_INET ? 32 : 128)) {
		note(env, NCCL_IB_ADDR_RANGE, true,
		     "NCCL_IB_ADDR_RANGE=%.40s: mask %d too long: NCCL ignores the range", range,
		     w->prefixlen);
		w->prefixlen = 0;
		return;
	}
	w->has_prefix = true;
}

/* "0000:0000:0000:0000:0000:ffff:c0a8:0a0a", as the GID table holds it */
static bool ipv4_mapped(const char *gid)
{
	return !strncasecmp(gid, "0000:0000:0000:0000:0000:ffff:", 30);
}

static void judge_gid_index(struct nccl_env *env, struct node_model *m, const bool *sel)
{
	struct nccl_reading *r = &env->out[NCCL_IB_GID_INDEX];
	struct object *node = &m->node;
	char prob[RW_STR_MAX] = "";
	struct gid_walk w;
	int64_t raw = load_var(env, NCCL_IB_GID_INDEX, -1);
	/*
	 * "*gidIndex = ncclParamIbGidIndex()" into an int (net_ib/connect.cc:318
	 * at v2.30.7, net_ib.cc:293 at v2.21.5): 4294967299 is GID 3, and a
	 * value whose int is negative is as if unset
	 */
	int idx = (int)raw;

	if (raw != idx)
		note(env, NCCL_IB_GID_INDEX, true,
		     "NCCL_IB_GID_INDEX=%.40s is read as %d (NCCL keeps it in an int)%s",
		     env->val[NCCL_IB_GID_INDEX], idx,
		     idx < 0 ? ": negative, so NCCL picks the GID itself" : "");
	gid_walk_read(env, &w);
	field_set_int(node, F_JOB_IB_GID_INDEX, idx < 0 ? -1 : idx);
	if (idx >= 0) {
		r->kind = NCCL_EFF_INT;
		r->num = idx;
	} else {
		r->kind = NCCL_EFF_LIST;
	}
	for (size_t i = 0; i < m->n_ports; i++)
		field_absent(m->ports[i], F_PORT_JOB_GID_INDEX, ABS_NOT_COLLECTED, 0);
	for (size_t i = 0; i < m->n_ports; i++) {
		struct object *p = m->ports[i];
		const struct gid_table *t =
		    field_present(p, F_PORT_GIDS) ? p->f[F_PORT_GIDS].v.gids : NULL;
		const struct gid_entry *g;
		uint8_t b[16];
		uint32_t pick;

		if (!sel[i] || !port_roce(p))
			continue;
		if (!t) {
			/* the GID table is unknown: the rule must say unknown, not pass */
			field_absent(node, F_JOB_IB_GID_INDEX_PROBLEM,
				     (enum absent_reason)p->f[F_PORT_GIDS].state,
				     p->f[F_PORT_GIDS].err);
			return;
		}
		pick = idx >= 0 ? (uint32_t)idx : gid_pick(&w, t);
		field_set_int(p, F_PORT_JOB_GID_INDEX, pick);
		if (idx < 0)
			add_item(r, "%s:%u=%u", p->name, p->port, pick);
		g = gid_at(t, pick, b);
		if (!g)
			set_problem(prob, sizeof(prob), "%s:%u has no GID %u", p->name, p->port,
				    pick);
		else if (strcmp(g->type, "RoCE v2"))
			set_problem(prob, sizeof(prob), "%s:%u GID %u is %s, not RoCE v2", p->name,
				    p->port, pick, g->type);
		else if (!gid_valid(b))
			set_problem(prob, sizeof(prob), "%s:%u GID %u is link-local", p->name,
				    p->port, pick);
		else if (w.family == AF_INET && !ipv4_mapped(g->gid))
			set_problem(prob, sizeof(prob), "%s:%u GID %u is not IPv4", p->name,
				    p->port, pick);
	}
	if (idx < 0 && prob[0])
		note(env, NCCL_IB_GID_INDEX, false,
		     "NCCL picks the GID itself (NCCL_IB_ADDR_FAMILY, NCCL_IB_ADDR_RANGE, "
		     "NCCL_IB_ROCE_VERSION_NUM) and falls back to index 0 when nothing fits");
	field_set_str(node, F_JOB_IB_GID_INDEX_PROBLEM, prob);
}

/*
 * The net the job's communicators use, as NCCL_NET and NCCL_NET_PLUGIN pick
 * it.  NCCL_NET names a net, compared with strcasecmp() to each net's name
 * in turn (src/plugin/net.cc:331 at v2.30.7, src/net.cc:560 at v2.21.5;
 * read at src/init.cc:2117 / :1628): NCCL's own are "IB"
 * (net_ib/common.cc:194) and "Socket" (net_socket.cc:804), anything else is
 * a plugin's or none, and then NCCL fails at init (plugin/net.cc:349,
 * net.cc:579).  Without NCCL_NET a net plugin that loads comes first
 * (net.cc:332 at v2.21.5: ncclNets[0]; plugin/net.cc:256-300 at v2.30.7):
 * the library NCCL_NET_PLUGIN names (NAME, then libnccl-net-NAME.so;
 * from 2.27 a ',' list, "none" or "" for no plugin), else libnccl-net.so.
 * Whether that library is in the job's image rocewatch cannot see.
 */
static void judge_net(struct nccl_env *env, struct object *node)
{
	struct nccl_reading *r = &env->out[NCCL_NET];
	const char *net = env->val[NCCL_NET], *plugin = env->val[NCCL_NET_PLUGIN];
	const char *which = "IB";
	enum nccl_num_note n;

	if (net && !strcasecmp(net, "IB")) {
		if (nccl_load_param(env->val[NCCL_IB_DISABLE], 0, &n))
			note(env, NCCL_NET, true,
			     "NCCL_NET=%.40s with NCCL_IB_DISABLE set: the IB net does not start "
			     "and no other is named IB, so NCCL fails at init",
			     net);
	} else if (net && !strcasecmp(net, "Socket")) {
		which = "Socket";
		note(env, NCCL_NET, false,
		     "NCCL_NET=%.40s: NCCL runs over TCP sockets, not RDMA; its IB code, which "
		     "rocewatch judges, is not used",
		     net);
	} else if (net && !net[0]) {
		which = "none";
		note(env, NCCL_NET, true,
		     "NCCL_NET is empty: no net has that name, NCCL fails at init");
	} else if (net) {
		which = "plugin";
		note(env, NCCL_NET, false,
		     "NCCL_NET=%.40s names a net plugin's net, not NCCL's own IB or Socket (NCCL "
		     "fails at init when no plugin has that name): NCCL's IB code is not used, so "
		     "rocewatch's judgement of NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_TC and "
		     "NCCL_IB_DISABLE does not apply",
		     net);
	} else if (plugin && plugin[0] && strcasecmp(plugin, "none")) {
		which = "plugin";
		note(env, NCCL_NET_PLUGIN, false,
		     "NCCL_NET_PLUGIN=%.40s: NCCL loads that net plugin (%.40s or "
		     "libnccl-net-%.40s.so; from 2.27 a ',' list) and, when it loads, uses it "
		     "before its own IB code: rocewatch's judgement of NCCL_IB_HCA, "
		     "NCCL_IB_GID_INDEX, NCCL_IB_TC and NCCL_IB_DISABLE does not apply",
		     plugin, plugin, plugin);
	} else if (plugin && !plugin[0]) {
		note(env, NCCL_NET_PLUGIN, true,
		     "NCCL_NET_PLUGIN is empty: NCCL 2.27 and later load no net plugin, 2.21-2.26 "
		     "load libnccl-net.so if the job's library path has one, as if unset");
	}
	r->kind = NCCL_EFF_STR;
	add_item(r, "%s", which);
	if (plugin) {
		env->out[NCCL_NET_PLUGIN].kind = NCCL_EFF_STR;
		add_item(&env->out[NCCL_NET_PLUGIN], "%.60s",
			 plugin[0] && strcasecmp(plugin, "none") ? plugin : "no plugin");
	}
	field_set_str(node, F_JOB_NET, which);
}

/* The priority the netdevs of the kept ports give a DSCP (trust dscp only); -1: unknown. */
static int dscp_priority(const struct node_model *m, const bool *sel, int dscp, const char **on)
{
	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *nd = m->ports[i]->netdev;
		int prio;

		if (!sel[i] || !nd || strcmp(str_or(nd, F_NETDEV_TRUST, ""), "dscp") ||
		    !field_present(nd, F_NETDEV_DSCP_MAP))
			continue;
		prio = nd->f[F_NETDEV_DSCP_MAP].v.dscp[dscp];
		if (prio < 0)
			continue;
		*on = nd->name;
		return prio;
	}
	return -1;
}

/* The TC NCCL sends its data with (its QPs' grh.traffic_class), as judge_tc() reads it. */
static int judge_tc(struct nccl_env *env, struct node_model *m, const bool *sel)
{
	struct nccl_reading *r = &env->out[NCCL_IB_TC];
	struct object *node = &m->node;
	const char *v = env->val[NCCL_IB_TC], *on = NULL;
	int64_t raw;
	int tc, prio;

	/* the default is 0 up to 2.25 and -1 ("unset") from 2.26: TC 0 either way */
	raw = load_var(env, NCCL_IB_TC, -1);
	if (raw == -1) {
		tc = 0;
		if (!v)
			note(env, NCCL_IB_TC, false,
			     "unset: NCCL sends TC 0 (DSCP 0, not ECN-capable), not rdma_cm's "
			     "default ToS; from 2.26 an application's ncclConfig_t.trafficClass "
			     "may set it");
		else if (v[0])
			note(env, NCCL_IB_TC, true,
			     "NCCL_IB_TC=%.20s: NCCL 2.26 and later send TC 0 (as if unset), "
			     "2.21-2.25 TC 255",
			     v);
	} else if ((int)raw == -1) {
		/*
		 * 2.30.7 passes ncclParamIbTc() as "int envTrafficClass"
		 * (net_ib/connect.cc:1096, :795) and tests that int against -1
		 * (:999-1001); 2.26-2.30.4 test the int64_t (connect.cc:821 at
		 * v2.30.4, net_ib.cc:1344 at v2.26.2) and 2.21-2.25 have no test
		 * (net_ib.cc:929 at v2.21.5): those send the low byte
		 */
		tc = 0;
		note(env, NCCL_IB_TC, true,
		     "NCCL_IB_TC=%.20s is -1 as the int NCCL 2.30.7 passes it in: 2.30.7 sends "
		     "TC 0 (as if unset: the application's ncclConfig_t.trafficClass, else 0), "
		     "2.21-2.30.4 send TC 255 (the low byte)",
		     v);
	} else {
		/* ah_attr.grh.traffic_class is a uint8_t */
		tc = (int)(uint8_t)raw;
		if (raw != tc)
			note(env, NCCL_IB_TC, true, "NCCL_IB_TC=%.20s is read as %d (the low byte)",
			     v, tc);
	}
	r->kind = NCCL_EFF_INT;
	r->num = tc;
	field_set_int(node, F_JOB_IB_TC, tc);
	field_set_int(node, F_JOB_IB_TC_DSCP, tc >> 2);
	field_set_int(node, F_JOB_IB_TC_ECN, tc & 3);
	prio = dscp_priority(m, sel, tc >> 2, &on);
	if (prio < 0) {
		field_absent(node, F_JOB_IB_TC_PRIORITY, ABS_UNSUPPORTED, 0);
		return tc;
	}
	field_set_int(node, F_JOB_IB_TC_PRIORITY, prio);
	note(env, NCCL_IB_TC, false, "DSCP %d lands on priority %d on %s (trust dscp)", tc >> 2,
	     prio, on);
	return tc;
}

/*
 * NCCL_IB_FIFO_TC: the TC of the receiver's QPs on RoCE, which carry its
 * clear-to-send (FIFO) writes to the sender, in place of the data's TC.
 * 2.21 has no such variable; 2.22-2.23 default to 0 and take any other
 * value ("if (ncclParamIbFifoTc() && override_tc)", net_ib.cc:92, :982-983
 * at v2.22.3); from 2.24 the default is -1 and any other value counts
 * (net_ib.cc:100, :1103 at v2.24.3; net_ib/connect.cc:21, :1245-1247 at
 * v2.30.7, "remDevInfo->link_layer == IBV_LINK_LAYER_ETHERNET &&
 * ncclParamIbFifoTc() != -1", the int64_t); its low byte is sent.
 */
static void judge_fifo_tc(struct nccl_env *env, struct node_model *m, const bool *sel, int tc)
{
	struct nccl_reading *r = &env->out[NCCL_IB_FIFO_TC];
	const char *v = env->val[NCCL_IB_FIFO_TC], *on = NULL;
	int64_t raw;
	int fifo, prio;

	if (!v)
		return; /* the clear-to-send messages go with the data's TC */
	raw = load_var(env, NCCL_IB_FIFO_TC, -1);
	if (raw == -1) {
		fifo = tc;
		if (v[0])
			note(env, NCCL_IB_FIFO_TC, true,
			     "NCCL_IB_FIFO_TC=%.20s: NCCL 2.24 and later send the clear-to-send "
			     "messages with the data's TC, %d (the default), 2.22-2.23 with TC 255",
			     v, tc);
	} else {
		fifo = (int)(uint8_t)raw;
		if (raw != fifo)
			note(env, NCCL_IB_FIFO_TC, true,
			     "NCCL_IB_FIFO_TC=%.20s is read as %d (the low byte)", v, fifo);
		if (!raw)
			note(env, NCCL_IB_FIFO_TC, false,
			     "NCCL 2.22-2.23 take 0 as unset: the data's TC, %d", tc);
	}
	note(env, NCCL_IB_FIFO_TC, false,
	     "the TC of the receiver's clear-to-send (FIFO) writes on RoCE, from NCCL 2.22 (2.21 "
	     "does not read it)");
	r->kind = NCCL_EFF_INT;
	r->num = fifo;
	if (fifo >> 2 == tc >> 2)
		return;
	prio = dscp_priority(m, sel, fifo >> 2, &on);
	if (prio >= 0)
		note(env, NCCL_IB_FIFO_TC, false,
		     "DSCP %d, not the data's %d, lands on priority %d on %s (trust dscp)",
		     fifo >> 2, tc >> 2, prio, on);
	else
		note(env, NCCL_IB_FIFO_TC, false, "DSCP %d, not the data's %d", fifo >> 2, tc >> 2);
}

/* NCCL's path type of rocewatch's PCI distance (collectors/host.c classifies as NCCL does). */
static int nccl_path_of(int pci)
{
	switch (pci) {
	case PCI_PATH_PIX:
		return NCCL_PATH_PIX;
	case PCI_PATH_PXB:
		return NCCL_PATH_PXB;
	case PCI_PATH_PHB:
		return NCCL_PATH_PHB;
	default:
		return NCCL_PATH_SYS;
	}
}

static void judge_gdr(struct nccl_env *env, struct object *node)
{
	struct nccl_reading *r = &env->out[NCCL_NET_GDR_LEVEL];
	const struct field_val *fp = &node->f[F_NODE_GPU_NIC_PATHS];
	const struct pci_pairs *pp = fp->v.pairs;
	const char *v = env->val[NCCL_NET_GDR_LEVEL];
	char prob[RW_STR_MAX] = "";
	int lvl, since;
	bool numeric;

	if (!v) {
		field_absent(node, F_JOB_NET_GDR_LEVEL, ABS_UNSUPPORTED, 0);
		field_absent(node, F_JOB_NET_GDR_PROBLEM, ABS_UNSUPPORTED, 0);
		return;
	}
	lvl = nccl_gdr_level(v, &since, &numeric);
	if (lvl == -2) {
		note(env, NCCL_NET_GDR_LEVEL, true,
		     "NCCL_NET_GDR_LEVEL=%.20s is %d in the int NCCL reads it into, an index "
		     "before its table of old-style levels (levelsOldToNew[], "
		     "src/graph/paths.cc): the level NCCL uses is undefined",
		     v, (int)strtol(v, NULL, 0));
		field_absent(node, F_JOB_NET_GDR_LEVEL, ABS_UNSUPPORTED, 0);
		field_absent(node, F_JOB_NET_GDR_PROBLEM, ABS_UNSUPPORTED, 0);
		return;
	}
	if (lvl < 0) {
		note(
		    env, NCCL_NET_GDR_LEVEL, true,
		    "NCCL_NET_GDR_LEVEL=%.20s is not a level NCCL knows (names are case-sensitive: "
		    "LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS): NCCL ignores it",
		    v);
		/* NCCL keeps its own default: nothing for the level rule to judge */
		field_absent(node, F_JOB_NET_GDR_LEVEL, ABS_UNSUPPORTED, 0);
		field_absent(node, F_JOB_NET_GDR_PROBLEM, ABS_UNSUPPORTED, 0);
		return;
	}
	if (since > 21)
		note(env, NCCL_NET_GDR_LEVEL, true,
		     "NCCL_NET_GDR_LEVEL=%s is known from NCCL 2.%d; older versions ignore it", v,
		     since);
	if (numeric && strtol(v, NULL, 0) != (int)strtol(v, NULL, 0))
		note(env, NCCL_NET_GDR_LEVEL, true,
		     "NCCL_NET_GDR_LEVEL=%.20s is read as %s (an old-style number that NCCL keeps "
		     "in an int: it wraps to %d)",
		     v, nccl_path_name((enum nccl_path)lvl), (int)strtol(v, NULL, 0));
	else if (numeric && (strlen(v) != 1 || v[0] > '5'))
		note(env, NCCL_NET_GDR_LEVEL, true,
		     "NCCL_NET_GDR_LEVEL=%.20s is read as %s (an old-style number, above 5 is SYS)",
		     v, nccl_path_name((enum nccl_path)lvl));
	r->kind = NCCL_EFF_STR;
	r->n = 0;
	add_item(r, "%s", nccl_path_name((enum nccl_path)lvl));
	field_set_str(node, F_JOB_NET_GDR_LEVEL, nccl_path_name((enum nccl_path)lvl));
	if (fp->state != ABS_NONE) {
		field_absent(node, F_JOB_NET_GDR_PROBLEM, (enum absent_reason)fp->state, fp->err);
		return;
	}
	/* each GPU against its nearest NIC: pairs are sorted by GPU; GDR when path <= level */
	for (size_t i = 0; pp && i < pp->n;) {
		size_t j = i;
		int best = NCCL_PATH_SYS;

		for (; j < pp->n && !strcmp(pp->e[j].gpu, pp->e[i].gpu); j++)
			if (nccl_path_of((int)pp->e[j].path) < best)
				best = nccl_path_of((int)pp->e[j].path);
		if (lvl < NCCL_PATH_PIX)
			set_problem(prob, sizeof(prob), "%s turns GPUDirect RDMA off",
				    nccl_path_name((enum nccl_path)lvl));
		else if (best <= NCCL_PATH_PXB && lvl < best)
			set_problem(prob, sizeof(prob), "%s forbids GPUDirect for GPU %s at %s",
				    nccl_path_name((enum nccl_path)lvl), pp->e[i].gpu,
				    nccl_path_name((enum nccl_path)best));
		else if (best > NCCL_PATH_PXB && lvl >= best)
			set_problem(prob, sizeof(prob), "%s allows GPUDirect for GPU %s at %s",
				    nccl_path_name((enum nccl_path)lvl), pp->e[i].gpu,
				    nccl_path_name((enum nccl_path)best));
		i = j;
	}
	field_set_str(node, F_JOB_NET_GDR_PROBLEM, prob);
}

static void judge_debug(const struct nccl_env *env, struct object *node)
{
	static const enum nccl_var vars[] = { NCCL_DEBUG, NCCL_ALGO, NCCL_PROTO };
	char out[RW_STR_MAX] = "";
	size_t len = 0;

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *v = env->val[vars[i]];
		char item[RW_STR_MAX];
		int n;

		if (!v || !v[0])
			continue;
		/* NCCL_DEBUG=WARN (and VERSION) are what production runs with */
		if (vars[i] == NCCL_DEBUG && strcasecmp(v, "INFO") && strcasecmp(v, "TRACE"))
			continue;
		n = snprintf(item, sizeof(item), "%s%s=%.16s", len ? " " : "", var_names[vars[i]],
			     v);
		if (n > 0 && len + (size_t)n < sizeof(out)) {
			memcpy(out + len, item, (size_t)n + 1);
			len += (size_t)n;
		}
	}
	field_set_str(node, F_JOB_DEBUG_TUNING, out);
}

static void unjudged(struct nccl_env *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void unjudged(struct nccl_env *env, const char *fmt, ...)
{
	va_list ap;

	if (env->n_unjudged == NCCL_UNJUDGED_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(env->unjudged[env->n_unjudged++], NCCL_UNJUDGED_LEN, fmt, ap);
	va_end(ap);
}

/* " (NAME=value)" where the job set v, else "" */
static const char *set_as(const struct nccl_env *env, enum nccl_var v, char *buf, size_t size)
{
	if (!env->val[v])
		return "";
	snprintf(buf, size, " (%s=%.40s)", var_names[v], env->val[v]);
	return buf;
}

/*
 * What rocewatch does not model, in the order it would bite, so that the
 * report names it instead of staying silent: a net plugin in the job's
 * image (NCCL_NET_PLUGIN unset: libnccl-net.so, src/plugin/net.cc:256 at
 * v2.30.7, src/net.cc:406 at v2.21.5), an application's
 * ncclConfig_t.trafficClass where NCCL_IB_TC is unset (connect.cc:999-1001
 * at v2.30.7), NCCL_IB_DATA_DIRECT (net_ib/init.cc:13, from 2.27, default
 * 1), NCCL_COMM_ID's subnet rule in interface auto-selection
 * (ncclFindInterfaceMatchSubnet(), src/misc/socket.cc:207-216 at v2.30.7),
 * the rail and plane fields of 2.30.7's "dev:port:rail:plane"
 * (src/misc/utils.cc:206-209), NCCL_NETDEVS_POLICY (src/graph/topo.cc:2005
 * at v2.30.7, from 2.28).
 */
static void list_unjudged(struct nccl_env *env, const char *net)
{
	const char *plugin = env->val[NCCL_NET_PLUGIN];
	enum nccl_num_note nn;
	char b[96];

	env->n_unjudged = 0;
	if (!strcmp(net, "IB") && (!plugin || !plugin[0]))
		unjudged(env,
			 "a net plugin in the job's image (libnccl-net.so on its library path, "
			 "which NCCL loads before its IB code)");
	if ((int)nccl_load_param(env->val[NCCL_IB_TC], -1, &nn) == -1)
		unjudged(env, "an application's ncclConfig_t.trafficClass (2.26 and later), the TC "
			      "NCCL sends when NCCL_IB_TC is unset");
	unjudged(env,
		 "NCCL_IB_DATA_DIRECT (2.27 and later, default 1: mlx5 Data Direct "
		 "devices)%s",
		 set_as(env, NCCL_IB_DATA_DIRECT, b, sizeof(b)));
	unjudged(env, "the NCCL_COMM_ID subnet rule of interface auto-selection%s",
		 set_as(env, NCCL_COMM_ID, b, sizeof(b)));
	unjudged(env, "the rail and plane fields of NCCL_IB_HCA entries (2.30.7)");
	unjudged(env, "NCCL_NETDEVS_POLICY (2.28 and later)%s",
		 set_as(env, NCCL_NETDEVS_POLICY, b, sizeof(b)));
}

/*
 * A note's first sentence for the job.reading fact (a string field of
 * RW_STR_MAX): cut at a word with "..." where it is longer.
 */
static void first_sentence(char *out, size_t size, const char *note)
{
	size_t n = strcspn(note, ";");

	if (n < size) {
		memcpy(out, note, n);
		out[n] = '\0';
		return;
	}
	n = size - 4;
	while (n > 0 && note[n] != ' ')
		n--;
	if (!n)
		n = size - 4;
	memcpy(out, note, n);
	memcpy(out + n, "...", 4);
}

void nccl_apply(struct nccl_env *env, struct node_model *m)
{
	struct object *node = &m->node;
	char reading[RW_STR_MAX] = "";
	bool *sel;
	int64_t v;
	int rail_id;

	readings_reset(env);
	env->n_unjudged = 0;
	sel = env->given ? calloc(m->n_ports ? m->n_ports : 1, sizeof(*sel)) : NULL;
	if (!sel) {
		enum absent_reason why = env->given ? ABS_ERROR : ABS_NOT_COLLECTED;
		int err = env->given ? ENOMEM : 0;

		for (int id = F_JOB_NCCL; id <= F_JOB_DEBUG_TUNING; id++)
			field_absent(node, (enum field_id)id, why, err);
		for (size_t i = 0; i < m->n_ports; i++)
			for (int id = F_PORT_JOB_HCA_INDEX; id <= F_PORT_JOB_GID_INDEX; id++)
				field_absent(m->ports[i], (enum field_id)id, why, err);
		return;
	}
	field_set_bool(node, F_JOB_NCCL, true);
	rail_id = field_lookup(OBJ_RDMA_PORT, "rail");
	for (size_t i = 0; i < m->n_ports; i++) {
		char rail[RW_STR_MAX];

		port_rail(m, m->ports[i], rail_id, rail, sizeof(rail));
		field_set_str(m->ports[i], F_PORT_JOB_RAIL, rail);
	}
	judge_ib_hca(env, m, sel);
	judge_socket_ifname(env, m);
	judge_gid_index(env, m, sel);
	judge_fifo_tc(env, m, sel, judge_tc(env, m, sel));
	/* ncclIbInit(): any value other than 0 turns RDMA off (sockets only) */
	v = load_var(env, NCCL_IB_DISABLE, 0);
	field_set_bool(node, F_JOB_IB_DISABLE, v != 0);
	env->out[NCCL_IB_DISABLE].kind = NCCL_EFF_INT;
	env->out[NCCL_IB_DISABLE].num = v;
	judge_net(env, node);
	judge_gdr(env, node);
	v = load_var(env, NCCL_CROSS_NIC, 2); /* NCCL's default, src/graph/search.cc */
	/* "int crossNic = ... ncclParamCrossNic()" (search.cc:1080-1083 at v2.30.7, :862 at
	 * v2.21.5) */
	if (v != (int)v)
		note(env, NCCL_CROSS_NIC, true,
		     "NCCL_CROSS_NIC=%.40s is read as %d (the graph search keeps it in an int)",
		     env->val[NCCL_CROSS_NIC], (int)v);
	v = (int)v;
	field_set_int(node, F_JOB_CROSS_NIC, v);
	env->out[NCCL_CROSS_NIC].kind = NCCL_EFF_INT;
	env->out[NCCL_CROSS_NIC].num = v;
	judge_debug(env, node);
	list_unjudged(env, node->f[F_JOB_NET].v.s);
	for (int i = 0; i < NCCL__VARS && !reading[0]; i++)
		if (env->out[i].warn)
			first_sentence(reading, sizeof(reading), nccl_note(&env->out[i]));
	field_set_str(node, F_JOB_READING, reading);
	free(sel);
}
