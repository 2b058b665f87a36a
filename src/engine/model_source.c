// SPDX-License-Identifier: MIT
/* A snapshot file as the source of the node model, and the choice of source (model_source.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "collector.h"
#include "model_source.h"
#include "snapshot.h"
#include "util.h"

struct snapshot_source {
	struct model_source src;
	const struct rw_config *cfg;
	struct snapshot_file *sf;
	size_t pos;
	/* the file as last opened: a replaced file is read again */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
};

static int file_stat(struct snapshot_source *ss, bool *changed)
{
	struct stat st;

	if (stat(ss->cfg->from, &st))
		return -errno;
	*changed = st.st_dev != ss->dev || st.st_ino != ss->ino || st.st_size != ss->size ||
		   st.st_mtim.tv_sec != ss->mtime.tv_sec || st.st_mtim.tv_nsec != ss->mtime.tv_nsec;
	ss->dev = st.st_dev;
	ss->ino = st.st_ino;
	ss->size = st.st_size;
	ss->mtime = st.st_mtim;
	return 0;
}

/* Drop the objects of kind whose name the configuration does not want. */
static void keep_wanted(struct node_model *m, enum obj_kind kind, const struct rw_config *cfg,
			bool (*wanted)(const struct rw_config *cfg, const char *name))
{
	struct object **objs;
	size_t n = model_objects(m, kind, &objs);

	model_begin(m, kind);
	for (size_t i = 0; i < n; i++)
		objs[i]->seen = wanted(cfg, objs[i]->name);
	model_sweep(m, kind);
}

static int snapshot_collect(struct model_source *src, struct node_model *m, unsigned what)
{
	struct snapshot_source *ss = (struct snapshot_source *)src;
	const struct rw_config *cfg = ss->cfg;
	char err[512];
	bool changed = false;
	int r;

	(void)what;
	if (file_stat(ss, &changed) == 0 && changed) {
		struct snapshot_file *nsf;

		/* The file was replaced: take the new one if it is valid, keep the old if not. */
		r = snapshot_open(cfg->from, &nsf, err, sizeof(err));
		if (r) {
			rw_log_once(LOG_LVL_ERROR, "from", "--from: %s (keeping the previous data)",
				    err);
		} else {
			rw_log_once_reset("from");
			snapshot_close(ss->sf);
			ss->sf = nsf;
			ss->pos = 0;
		}
	}
	r = snapshot_apply(ss->sf, ss->pos, m, err, sizeof(err));
	if (r) {
		rw_log_once(LOG_LVL_ERROR, "from-apply", "--from: %s", err);
		return r;
	}
	/* --netdev-include/--netdev-exclude and --rdma-device-*: as they filter the machine */
	if (cfg->has_netdev_include || cfg->has_netdev_exclude)
		keep_wanted(m, OBJ_NETDEV, cfg, config_netdev_wanted);
	if (cfg->has_rdma_include || cfg->has_rdma_exclude)
		keep_wanted(m, OBJ_RDMA_PORT, cfg, config_rdma_wanted);
	if (ss->pos + 1 < snapshot_count(ss->sf))
		ss->pos++;
	return 0;
}

static size_t snapshot_samples(const struct model_source *src)
{
	return snapshot_count(((const struct snapshot_source *)src)->sf);
}

static void snapshot_source_close(struct model_source *src)
{
	struct snapshot_source *ss = (struct snapshot_source *)src;

	snapshot_close(ss->sf);
	free(ss);
}

int snapshot_source_open(struct model_source **out, const struct rw_config *cfg, char *err,
			 size_t errlen)
{
	struct snapshot_source *ss = calloc(1, sizeof(*ss));
	bool changed;
	int r;

	if (!ss)
		return -ENOMEM;
	ss->src = (struct model_source){ .name = "snapshot",
					 .collect = snapshot_collect,
					 .samples = snapshot_samples,
					 .close = snapshot_source_close };
	ss->cfg = cfg;
	r = snapshot_open(cfg->from, &ss->sf, err, errlen);
	if (r) {
		free(ss);
		return r;
	}
	file_stat(ss, &changed);
	*out = &ss->src;
	return 0;
}

int model_source_open(struct model_source **out, const struct rw_config *cfg, char *err,
		      size_t errlen)
{
	if (cfg->from)
		return snapshot_source_open(out, cfg, err, errlen);
	return live_source_open(out, cfg, collectors, n_collectors, NULL, err, errlen);
}
