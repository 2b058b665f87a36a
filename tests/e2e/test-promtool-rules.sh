#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shipped Prometheus rules: syntax (promtool check rules), behaviour
# (promtool test rules) and the example scrape config (promtool check config).
. "$(dirname "$0")/../lib.sh"
need_cmd promtool "apt-get install prometheus"
d="$SOURCE_DIR/contrib/prometheus"
check "promtool check rules" promtool check rules "$d/rocewatch-alerts.yml"
check "promtool test rules" bash -c "cd '$d' && promtool test rules rocewatch-alerts.test.yml"
# check config resolves rule_files relative to the config file
check "promtool check config (example)" promtool check config "$d/scrape-config.yml"
finish
