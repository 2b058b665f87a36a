/* SPDX-License-Identifier: MIT */
/* What was built: version, source revision and compiler (rocewatch_build_info, `version`). */
#ifndef ROCEWATCH_BUILD_INFO_H
#define ROCEWATCH_BUILD_INFO_H

/* git revision at build time (meson vcs_tag), "unknown" when built from a tarball */
extern const char rw_build_revision[];
/* compiler id and version as meson saw it, e.g. "gcc 12.2.0" */
extern const char rw_build_compiler[];

#endif
