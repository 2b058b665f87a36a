# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Host-side helpers for the vm test tier, sourced by tests/vm/run-scenario.
#
# The guest is Debian's own linux-image-6.1.0-*-amd64 (the plain flavour: -cloud has no
# rdma_rxe) booted under qemu TCG. Its root file system is the host's / over read-only
# virtio-9p with a tmpfs overlay, so the guest runs the host's rdma-core, perftest, iproute2
# and the freshly built rocewatch without any image to build. See tests/vm/README.md.

# Exit code meson reads as "skipped".
VM_EXIT_SKIP=77

# Modules the initramfs loads: what it needs to mount the host's / over 9p and overlay it,
# configfs (a module in Debian; rdma_cm's settings live there) and the guest's NIC driver (busybox insmod from the initramfs is quicker than kmod over 9p).
# Their load order comes from modules.dep (modprobe --show-depends), not from this list.
VM_INITRAMFS_MODULES=(virtio_pci 9pnet_virtio 9p overlay configfs e1000)

vm_note() { printf 'vm: %s\n' "$*" >&2; }

# A skip is one line on stdout (meson shows it) and exit 77.
vm_skip() {
	printf 'SKIP: %s\n' "$*"
	exit "$VM_EXIT_SKIP"
}

# A harness error is a failure of the run, not a skip: something we expected to work did not.
vm_die() {
	printf 'FAIL: %s\n' "$*"
	exit 1
}

# vm_find_static_busybox: print the path of a statically linked busybox, or nothing.
# The initramfs has no libc, so a dynamically linked busybox would not start there.
vm_find_static_busybox() {
	local bb out
	for bb in "${ROCEWATCH_VM_BUSYBOX:-}" /bin/busybox /usr/bin/busybox; do
		[[ -n $bb && -x $bb ]] || continue
		# ldd exits 1 for a static binary, so read its words rather than its status.
		out=$(LC_ALL=C ldd "$bb" 2>&1) || true
		if [[ $out == *"not a dynamic executable"* ]]; then
			printf '%s\n' "$bb"
			return 0
		fi
	done
	return 1
}

# vm_preflight: skip (77) when this machine cannot run the tier at all.
vm_preflight() {
	local tool
	[[ $EUID -eq 0 ]] || vm_skip "vm tier needs root (shares / with the guest over 9p as root)"
	command -v qemu-system-x86_64 >/dev/null || vm_skip "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
	VM_BUSYBOX=$(vm_find_static_busybox) || vm_skip "no statically linked busybox (apt-get install busybox-static)"
	for tool in cpio depmod modprobe dpkg-deb apt-get apt-cache gzip flock ss timeout; do
		command -v "$tool" >/dev/null || vm_skip "$tool not found (needed to build the guest)"
	done
}

# vm_abspath PATH: absolute path without requiring that it exists.
vm_abspath() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s/%s\n' "$PWD" "$1" ;;
	esac
}

# vm_check_path WHAT PATH: the kernel command line and the guest's mounts are split on
# whitespace, so paths that reach the guest must not contain any.
vm_check_path() {
	case $2 in
	*[[:space:]]* | *,*) vm_die "$1 path must not contain whitespace or commas: '$2'" ;;
	esac
}

# vm_kernel_ready DIR KVER: an extracted kernel tree that finished extracting and depmod.
vm_kernel_ready() {
	[[ -f $1/.complete && -f $1/boot/vmlinuz-$2 && -f $1/lib/modules/$2/modules.dep ]]
}

# vm_kernel_candidates: plain amd64 6.1 kernel packages known to apt, newest first.
vm_kernel_candidates() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
		awk '{ print $1 }' | sort -rV
}

# vm_fetch_one PKG CACHE: download and extract one kernel package; print its version.
vm_fetch_one() {
	local pkg=$1 cache=$2 kver deb tmp
	kver=${pkg#linux-image-}
	mkdir -p "$cache/debs"
	# apt's sandbox user cannot write into a root-owned cache directory; we are root anyway.
	if ! (cd "$cache/debs" && apt-get -q -o APT::Sandbox::User=root download "$pkg" >&2); then
		return 1
	fi
	deb=$(find "$cache/debs" -maxdepth 1 -name "${pkg}_*_amd64.deb" -print | sort -V | tail -n 1)
	[[ -n $deb ]] || return 1
	tmp="$cache/kernel/.extract.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	dpkg-deb -x "$deb" "$tmp" || return 1
	depmod -b "$tmp" "$kver" || return 1
	touch "$tmp/.complete" || return 1
	rm -rf "${cache:?}/kernel/$kver"
	mv "$tmp" "$cache/kernel/$kver" || return 1
	# The extracted tree is all we use; the .deb is 70 MB we would never read again.
	rm -f "$deb"
	printf '%s\n' "$kver"
}

# vm_prepare_kernel CACHE: sets VM_KVER, VM_KROOT, VM_VMLINUZ.
# A cached kernel is reused without touching the network; ROCEWATCH_VM_REFRESH=1 looks for a
# newer package, ROCEWATCH_VM_KVER=6.1.0-NN-amd64 pins one.
vm_prepare_kernel() {
	local cache=$1 kver="" pkg tried=0
	mkdir -p "$cache/kernel"
	if [[ -n ${ROCEWATCH_VM_KVER:-} ]]; then
		kver=$ROCEWATCH_VM_KVER
		if ! vm_kernel_ready "$cache/kernel/$kver" "$kver"; then
			vm_note "downloading linux-image-$kver into $cache"
			vm_fetch_one "linux-image-$kver" "$cache" >/dev/null ||
				vm_skip "cannot download linux-image-$kver"
		fi
	else
		if [[ -z ${ROCEWATCH_VM_REFRESH:-} && -f $cache/current ]]; then
			kver=$(<"$cache/current")
			vm_kernel_ready "$cache/kernel/$kver" "$kver" || kver=""
		fi
		if [[ -z $kver ]]; then
			# Newest first; a mirror can lag its index, so fall back to the next two.
			while read -r pkg; do
				[[ -n $pkg ]] || continue
				if vm_kernel_ready "$cache/kernel/${pkg#linux-image-}" "${pkg#linux-image-}"; then
					kver=${pkg#linux-image-}
					break
				fi
				vm_note "downloading $pkg into $cache"
				if kver=$(vm_fetch_one "$pkg" "$cache"); then
					break
				fi
				kver=""
				tried=$((tried + 1))
				((tried < 3)) || break
			done < <(vm_kernel_candidates)
			[[ -n $kver ]] || vm_skip "cannot download a linux-image-6.1.0-*-amd64 package (apt lists empty or mirror unreachable)"
			printf '%s\n' "$kver" >"$cache/current"
		fi
	fi
	VM_KVER=$kver
	VM_KROOT=$cache/kernel/$kver
	VM_VMLINUZ=$VM_KROOT/boot/vmlinuz-$kver
	# Under TCG the guest spends seconds unpacking its own xz payload; an ELF vmlinux with a
	# PVH entry note boots straight into the kernel. Fall back to the bzImage if extraction fails.
	if [[ ${ROCEWATCH_VM_PVH:-1} != 0 ]] && vm_extract_vmlinux "$VM_VMLINUZ" "$VM_KROOT/boot/vmlinux-$kver"; then
		VM_VMLINUZ=$VM_KROOT/boot/vmlinux-$kver
	fi
}

# vm_le32 FILE OFFSET: the little-endian 32-bit word at OFFSET.
vm_le32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }

# vm_payload FILE OFFSET LENGTH: LENGTH bytes of FILE from OFFSET, on stdout.
vm_payload() { dd if="$1" iflag=skip_bytes,count_bytes skip="$2" count="$3" bs=1M status=none; }

# vm_extract_vmlinux BZIMAGE OUT: the uncompressed ELF kernel inside a bzImage, cached in OUT.
# The x86 boot protocol (2.08+) gives the payload's place in the setup header: setup_sects at
# 0x1f1, payload_offset at 0x248 and payload_length at 0x24c, both relative to the start of the
# protected-mode code at (setup_sects + 1) * 512. Only a payload with a PVH entry note is useful.
vm_extract_vmlinux() {
	local bz=$1 out=$2 setup_sects off len magic
	[[ -s $out ]] && return 0
	command -v od >/dev/null || return 1
	setup_sects=$(od -An -tu1 -j $((0x1f1)) -N1 "$bz" | tr -d ' ')
	off=$(vm_le32 "$bz" $((0x248))) && len=$(vm_le32 "$bz" $((0x24c))) || return 1
	[[ -n $setup_sects && -n $off && -n $len ]] && ((len > 0)) || return 1
	off=$(((setup_sects + 1) * 512 + off))
	magic=$(od -An -tx1 -j "$off" -N6 "$bz" | tr -d ' ')
	# xz and zstd payloads end with the 4-byte uncompressed size, which is not part of the stream.
	case $magic in
	fd377a585a00) vm_payload "$bz" "$off" $((len - 4)) | xz -dcq >"$out.tmp" ;;
	28b52ffd*) vm_payload "$bz" "$off" $((len - 4)) | zstd -dcq >"$out.tmp" ;;
	1f8b*) vm_payload "$bz" "$off" "$len" | gzip -dcq >"$out.tmp" ;;
	*) false ;;
	esac || {
		rm -f "$out.tmp"
		return 1
	}
	# Only an ELF vmlinux can be booted by qemu -kernel without the bzImage's own setup code.
	if [[ $(od -An -tx1 -N4 "$out.tmp" 2>/dev/null | tr -d ' ') != 7f454c46 ]]; then
		rm -f "$out.tmp"
		return 1
	fi
	mv "$out.tmp" "$out"
}

# The initramfs's /init: load the 9p, overlay and NIC modules, mount the host's / read-only with a
# tmpfs overlay on top, give it its own /proc, /sys, /dev, /tmp, /run, configfs, debugfs and bpffs,
# mount the writable results share, put the downloaded kernel's modules on /lib/modules, and hand
# over to the stage-2 script (tests/vm/guest-init.sh). The mounts happen here because busybox
# running from RAM is quicker than the host's mount(8) loading its libraries over 9p under TCG.
# Paths come from the kernel command line: rwvm_init=, rwvm_results=, rwvm_modules=.
vm_initramfs_init() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

halt_now() {
	echo "rwvm-init: $*"
	sync
	poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 3600
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

while read -r mod; do
	insmod "/lib/rwvm/$mod" || halt_now "insmod $mod failed"
done </lib/rwvm/order

stage2= results= modules=
for word in $(cat /proc/cmdline); do
	case $word in
	rwvm_init=*) stage2=${word#rwvm_init=} ;;
	rwvm_results=*) results=${word#rwvm_results=} ;;
	rwvm_modules=*) modules=${word#rwvm_modules=} ;;
	esac
done
[ -n "$stage2" ] && [ -n "$results" ] && [ -n "$modules" ] ||
	halt_now "need rwvm_init=, rwvm_results= and rwvm_modules= on the kernel command line"

mkdir -p /host /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 hostroot /host ||
	halt_now "cannot mount the host's / over 9p"
mount -t tmpfs -o mode=0755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
	halt_now "cannot mount the overlay root"
[ -x "/newroot$stage2" ] || halt_now "stage 2 $stage2 is not executable in the guest"

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
# The host's /run and /dev/shm hold the host's live state; the guest gets its own. /tmp stays
# the host's (writes go to the overlay) so that scenarios and build trees under /tmp work.
mount -t tmpfs -o mode=0755 tmpfs /newroot/run
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts -o gid=5,mode=0620 devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
# rocewatch reads rdma_cm's configfs, mlx5's debugfs and pins BPF programs.
mount -t configfs configfs /newroot/sys/kernel/config
mount -t debugfs debugfs /newroot/sys/kernel/debug
mount -t bpf bpf /newroot/sys/fs/bpf

# The one writable share with the host. In two-guest runs both guests mount the same host
# directory, which the rendezvous helpers build on; without caching, a marker the peer wrote is
# seen at once.
mkdir -p "/newroot$results"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none results "/newroot$results" ||
	halt_now "cannot mount the results share on $results"

# modprobe in the guest must find the downloaded kernel's modules, not the host's. /lib is
# usually a symlink (merged /usr); resolve it inside the new root, not in the initramfs.
lib=/newroot/lib
if [ -L "$lib" ]; then
	target=$(readlink "$lib")
	case $target in
	/*) lib=/newroot$target ;;
	*) lib=/newroot/$target ;;
	esac
fi
mkdir -p "$lib/modules"
mount --bind "/newroot$modules" "$lib/modules" || halt_now "cannot bind $modules on /lib/modules"

exec switch_root /newroot /bin/bash "$stage2"
EOF
}

# vm_build_initramfs CACHE: sets VM_INITRD. Built once per kernel and per /init text.
vm_build_initramfs() {
	local cache=$1 tag out stage mod n=0
	tag=$({
		vm_initramfs_init
		printf '%s\n' "${VM_INITRAMFS_MODULES[@]}"
	} | sha256sum | cut -c1-12)
	out=$cache/initramfs-$VM_KVER-$tag.cpio.gz
	VM_INITRD=$out
	[[ -s $out ]] && return 0

	vm_note "building $out"
	stage=$(mktemp -d "$cache/.initramfs.XXXXXX")
	mkdir -p "$stage/bin" "$stage/lib/rwvm" "$stage/proc" "$stage/sys" "$stage/dev"
	cp "$VM_BUSYBOX" "$stage/bin/busybox"
	vm_initramfs_init >"$stage/init"
	chmod 0755 "$stage/init"
	: >"$stage/lib/rwvm/order"
	# --show-depends prints "insmod PATH" in load order, dependencies first, and "builtin
	# NAME" for what the kernel has built in; duplicates across the list are dropped.
	while read -r kind mod _; do
		[[ $kind == insmod ]] || continue
		grep -qx "[0-9]*-${mod##*/}" "$stage/lib/rwvm/order" && continue
		n=$((n + 1))
		cp "$mod" "$stage/lib/rwvm/$(printf '%02d' "$n")-${mod##*/}"
		printf '%02d-%s\n' "$n" "${mod##*/}" >>"$stage/lib/rwvm/order"
	done < <(for mod in "${VM_INITRAMFS_MODULES[@]}"; do
		modprobe -d "$VM_KROOT" -S "$VM_KVER" --show-depends "$mod" ||
			printf 'error %s\n' "$mod"
	done)
	if ((n == 0)); then
		rm -rf "$stage"
		vm_die "no modules resolved for the initramfs from $VM_KROOT"
	fi
	(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
}

# vm_prepare CACHE: kernel and initramfs, serialised so parallel test runs share one download.
vm_prepare() {
	local cache=$1
	mkdir -p "$cache"
	exec {VM_LOCK_FD}>"$cache/.lock"
	flock "$VM_LOCK_FD"
	vm_prepare_kernel "$cache"
	vm_build_initramfs "$cache"
	flock -u "$VM_LOCK_FD"
	exec {VM_LOCK_FD}>&-
}

# vm_port_in_use PORT: whether anything on this host has a TCP socket on PORT.
vm_port_in_use() {
	[[ -n $(ss -Htan "( sport = :$1 )" 2>/dev/null) ]]
}

# vm_pick_port: a TCP port on 127.0.0.1 that nothing uses right now. The caller still has to
# cope with losing a race for it (qemu fails to bind and exits).
vm_pick_port() {
	local i port
	for ((i = 0; i < 100; i++)); do
		port=$((20000 + RANDOM % 40000))
		vm_port_in_use "$port" || {
			printf '%s\n' "$port"
			return 0
		}
	done
	return 1
}

# vm_guest_ip ID, vm_guest_mac ID: addresses of guest ID on the private guest-to-guest link.
# Distinct MACs matter: with qemu's default MAC on both guests, IPv6 DAD fails and the RoCE
# packets never leave.
vm_guest_ip() { printf '10.99.0.%d\n' "$(($1 + 1))"; }
vm_guest_mac() { printf '52:54:00:72:77:%02x\n' "$(($1 + 1))"; }
# vm_nic_mac ID N: the MAC of guest ID's NIC N (guest 0 of three has two: a port each of br0)
vm_nic_mac() {
	if (($2 == 0)); then
		vm_guest_mac "$1"
	else
		printf '52:54:00:72:%02x:%02x\n' $((0x77 + $2)) "$(($1 + 1))"
	fi
}

# vm_start_guest ID NETDEV_ARGS...: start one qemu in the background, an e1000 on each netdev
# (ids n0, n1, ...); sets VM_PIDS[ID].
# Needs VM_VMLINUZ, VM_INITRD, VM_RESULTS, VM_STAGE2, VM_SCENARIO and the guest's env file.
vm_start_guest() {
	local id=$1 append j=0 nd nics=()
	shift
	for nd in "$@"; do
		nics+=(-netdev "$nd" -device "e1000,netdev=n$j,mac=$(vm_nic_mac "$id" "$j"),romfile=")
		j=$((j + 1))
	done
	append="console=ttyS0 panic=-1 oops=panic mitigations=off no_timer_check"
	[[ -n ${ROCEWATCH_VM_VERBOSE:-} ]] || append+=" loglevel=5"
	append+=" rwvm_init=$VM_STAGE2 rwvm_results=$VM_RESULTS rwvm_modules=$VM_KROOT/lib/modules"
	append+=" rwvm_env=$VM_RESULTS/.vm/guest$id.env rwvm_script=$VM_SCENARIO"
	qemu-system-x86_64 \
		-name "rocewatch-vm$id" \
		-accel tcg \
		-m "${ROCEWATCH_VM_MEM:-512M}" -smp 1 \
		-nodefaults -no-user-config -nographic -no-reboot \
		-monitor none -serial "file:$VM_RESULTS/console-$id.log" \
		-kernel "$VM_VMLINUZ" -initrd "$VM_INITRD" -append "$append" \
		-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=results,path=$VM_RESULTS,security_model=none,multidevs=remap" \
		-device virtio-9p-pci,fsdev=results,mount_tag=results \
		"${nics[@]}" \
		</dev/null >"$VM_RESULTS/qemu-$id.out" 2>&1 &
	VM_PIDS[id]=$!
}

# vm_kill_guests: stop every qemu we started (TERM, then KILL after a grace period).
vm_kill_guests() {
	local pid alive i
	for pid in "${VM_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for ((i = 0; i < 20; i++)); do
		alive=0
		for pid in "${VM_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		((alive)) || break
		sleep 0.1
	done
	for pid in "${VM_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# vm_write_env ID FILE: the guest's environment, as bash source, read by stage 2.
vm_write_env() {
	local id=$1 file=$2 peer="" peers="" j iface=eth0
	if ((VM_GUESTS == 2)); then
		peer=$(vm_guest_ip $((1 - id)))
	fi
	for ((j = 0; j < VM_GUESTS; j++)); do
		((j == id)) || peers+="${peers:+ }$(vm_guest_ip "$j")"
	done
	# three guests: a star on guest 0, whose two links are ports of its bridge
	if ((VM_GUESTS == 3)); then
		peer=${peers%% *}
		((id == 0)) && iface=br0
	fi
	{
		printf 'GUEST_ID=%q\n' "$id"
		printf 'GUEST_COUNT=%q\n' "$VM_GUESTS"
		printf 'GUEST_IFACE=%q\n' "$iface"
		printf 'GUEST_IP=%q\n' "$(vm_guest_ip "$id")"
		printf 'GUEST_PREFIX=%q\n' 24
		printf 'GUEST_MAC=%q\n' "$(vm_guest_mac "$id")"
		printf 'PEER_IP=%q\n' "$peer"
		printf 'PEER_IPS=%q\n' "$peers"
		printf 'VM_RESULTS=%q\n' "$VM_RESULTS"
		printf 'VM_OUT=%q\n' "$VM_RESULTS/guest$id"
		printf 'RESULT_FILE=%q\n' "$VM_RESULTS/guest$id/result"
		printf 'VM_LIB=%q\n' "$VM_DIR/guest-lib.sh"
		printf 'VM_KROOT=%q\n' "$VM_KROOT"
		printf 'VM_KVER=%q\n' "$VM_KVER"
		printf 'VM_SCENARIO_TIMEOUT=%q\n' "$VM_SCENARIO_TIMEOUT"
		printf 'ROCEWATCH_SRCDIR=%q\n' "$VM_SRCDIR"
		printf 'ROCEWATCH_BUILDDIR=%q\n' "$VM_BUILDDIR"
		printf 'ROCEWATCH=%q\n' "$VM_ROCEWATCH"
		printf 'VM_RWNIC_KO=%q\n' "${VM_RWNIC_KO:-}"
		printf 'VM_RWNIC_SKIP=%q\n' "${VM_RWNIC_SKIP:-}"
		printf 'VM_SCENARIO_ARGS=('
		printf '%q ' "${VM_SCENARIO_ARGS[@]}"
		printf ')\n'
	} >"$file"
}

# vm_result_line ID: the last RESULT: line guest ID wrote, or nothing.
vm_result_line() {
	local f=$VM_RESULTS/guest$1/result
	[[ -f $f ]] || return 0
	grep '^RESULT: ' "$f" | tail -n 1
}

# vm_console_tail ID [LINES]: the end of guest ID's serial console, indented, for a report.
vm_console_tail() {
	local f=$VM_RESULTS/console-$1.log n=${2:-40}
	printf -- '--- guest %s: last %s lines of %s\n' "$1" "$n" "$f"
	if [[ -s $f ]]; then
		tail -n "$n" "$f" | tr -d '\r' | sed 's/^/  | /'
	else
		printf '  | (empty)\n'
	fi
	# A one-guest run's NIC sits on a hub of its own, which qemu warns about; that is by design.
	local q
	q=$(grep -v 'is not connected to host network' "$VM_RESULTS/qemu-$1.out" 2>/dev/null | tail -n 10) || true
	if [[ -n $q ]]; then
		printf -- '--- guest %s: qemu said\n' "$1"
		printf '%s\n' "$q" | sed 's/^/  | /'
	fi
}

# vm_parts_report: what tests/vm/sequence.sh recorded per part (guestN/parts), per guest.
vm_parts_report() {
	local id f
	for ((id = 0; id < VM_GUESTS; id++)); do
		f=$VM_RESULTS/guest$id/parts
		[[ -s $f ]] || continue
		printf '  guest %s:\n' "$id"
		sed 's/^/    /' "$f"
	done
}
