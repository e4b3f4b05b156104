# flashscale: `make demo` and `make test` do all set-up on a fresh Debian/Ubuntu machine.
SHELL := /bin/bash
comma := ,
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The extras of pyproject.toml that .venv holds, and the lock pins with every dependency they bring.
EXTRAS := test,lab,vm,docs
LOCK := requirements.lock
# make lock's own venv: pip-tools, never in .venv. make test-latest's: the newest versions pyproject.toml allows.
TOOLS_VENV := .venv-tools
PIP_TOOLS := pip==26.3 pip-tools==7.6.2
LATEST_VENV := .venv-latest
# make lock UPGRADE=pandas moves only pandas (and what it needs); without it every package moves to its newest.
UPGRADE ?=
FAST_TIER := not root and not notebook and not lab and not vm
CAMPAIGN ?= runners/quickstart.yaml
LAB_PORT ?= 8888
REPORT ?= reports/quickstart/quickstart.html
# make sample-report's folder: the imported data (data/) and its report (site/imported/), which make docs publishes.
SAMPLE := reports/sample

.PHONY: app-deps applications demo demo-uncapped demo-vm demo-cluster deps-vm test test-vm test-fast bench bench-cost \
	bench-stats bench-predict study long-quickstart reference deps system-deps browser-deps lab screenshot clean-reports help \
	lock test-latest docs sample-report reference-docs demo-ssh-cluster test-ssh test-ssh-long test-half-cpu test-long test-fresh-root

# Every target of .PHONY, one line each (tests/test_make_help.py holds the two to each other); each duration is
# docs/durations.yaml's, with the measurement it comes from (tests/test_durations.py).
help:
	@echo "Run it:"
	@echo "make demo   - install what is needed, run the quickstart campaign, publish its report (about 8 minutes)"
	@echo "make demo-uncapped - the quickstart's layouts on uncapped emulated devices: the CPU binds, and the report says so (about 5 minutes)"
	@echo "make demo-vm - seed 000's layouts (md RAID-0 native and IMSM, LVM, btrfs) on 4 NVMe devices in a VM (about 10 minutes)"
	@echo "make demo-cluster - 1 and 2 emulated hosts, local and over their capped links (nbd), its report (about 3 minutes)"
	@echo "make demo-ssh-cluster - a layout built and measured on each of 2 real sshd hosts (namespaces) over SSH, its report (about a minute)"
	@echo "make study  - every study notebook in order on the emulated array, one report folder with index.html (about 10 minutes)"
	@echo "make applications - bonnie++, pgbench and a many-files transfer beside fio, every device monitored (about 10 minutes)"
	@echo "make reference - the seed studies' published numbers rerun with flashscale's analysis"
	@echo "make long-quickstart - the quickstart with 3 repetitions of 10 s runs (about 15 minutes)"
	@echo "make lab    - JupyterLab on localhost with the notebooks and the flashscale kernel (prints its URL)"
	@echo "Test it:"
	@echo "make test   - install what is needed, run the whole test suite (real fio on loop devices as root; about 16 minutes)"
	@echo "make test-long - the long tests make test leaves: whole studies of notebooks, the longest campaigns, a cluster host killed mid-run (about 8 minutes)"
	@echo "make test-fresh-root - make test in a minimal Debian 12 root built from Debian's packages (mmdebstrap), where only the Makefile installs anything (root; CI runs it)"
	@echo "make test-fast - the layer contract and the tests that need neither root, notebooks nor JupyterLab"
	@echo "make test-half-cpu - make test's suite with the CPUs held to half their time (a cgroup cpu quota; HALF_CPU_TESTS narrows it)"
	@echo "make test-vm - the VM lab's tests: seed 000's md, IMSM and LVM layouts, the guard and kill -9 on a real kernel (about 30 minutes)"
	@echo "make test-ssh - the SSH cluster's tests with its long faults: sshd or fio server killed, kill -9 and reap, 8 hosts, an attacker's tries (about 4 minutes, root)"
	@echo "make test-ssh-long - only the long SSH tests of make test-ssh, the ones make test leaves (what CI runs after make test; root)"
	@echo "make test-latest - the fast tests and the layer contract on the newest versions allowed, in $(LATEST_VENV) (the lock stays)"
	@echo "make bench  - speed and memory benchmarks of parsing and analysis, what monitoring costs, what a hostile file costs the import, and each --help against python -c pass"
	@echo "make bench-cost - what PRECISION buys against a fixed grid of 3 runs on the emulated array, caps drawn run to run around a known mean: device time, coverage of the truth, right verdicts; every run kept in benchmarks/results/cost (about 29 minutes, root)"
	@echo "make bench-stats - every error rate the tax verdicts and intervals state, measured by Monte Carlo on flashscale's own functions over runs, spreads, margins and MAX_REPETITIONS; fails where one exceeds its stated rate (about 5 minutes)"
	@echo "make bench-predict - predicted against measured: uncapped loop devices, the VM lab, null_blk, the seeds; each run kept in benchmarks/results (about 30 minutes, root)"
	@echo "Document it:"
	@echo "make docs   - the documentation site from docs/ into docs/_build/html (offline, the lock's Sphinx; about 20 seconds)"
	@echo "make sample-report - a published report without root: shipped fio output imported, then its report into $(SAMPLE)/site (about a minute)"
	@echo "make reference-docs - write the reference into docs/*.md from the code (commands, parameters, columns...); a test fails when it is stale"
	@echo "make screenshot - docs/quickstart-report.png and -conclusions.png from $(REPORT) (after make demo), in headless Chromium"
	@echo "Set it up (each target above installs what it needs):"
	@echo "make deps   - .venv at the versions of $(LOCK), flashscale in it, and fio and the file system tools (system-deps)"
	@echo "make system-deps - fio, xfsprogs, btrfs-progs, e2fsprogs, iproute2, qemu-utils and OpenSSH from Debian when missing (root)"
	@echo "make deps-vm - what the VM lab needs: QEMU, Debian's kernel, mdadm, lvm2, nvme-cli, busybox, and the venv's bytecode"
	@echo "make app-deps - bonnie++ and PostgreSQL (with pgbench) for the application workloads"
	@echo "make browser-deps - headless Chromium for the report's browser test and make screenshot"
	@echo "make lock   - refresh $(LOCK) to the newest versions pyproject.toml allows (UPGRADE=pandas: only pandas), and environment.yml from it"
	@echo "make clean-reports - say where reports and measurements are (it removes nothing)"
	@echo "make help   - this list"

demo: deps
	$(BIN)/flashscale run $(CAMPAIGN)
	@echo "Report: $(CURDIR)/reports/quickstart/quickstart.html"

demo-uncapped: deps
	$(BIN)/flashscale run runners/uncapped.yaml
	@echo "Report: $(CURDIR)/reports/uncapped/quickstart.html"

# The layer contract (pyproject.toml, [tool.importlinter]) first: the folders of lib/flashscale are the pipeline.
# The tests execute the quickstart, the study notebooks 01-09, 11_job_file and reference_studies through flashscale run
# with tiny parameters and check the numbers they record (09_applications's campaign is the one its workloads' tests
# read); nbval executes the other notebooks at their own (tiny) defaults.
NBVAL_NOTEBOOKS := notebooks/10_cluster.ipynb

# The VM lab's tests (marker vm: md RAID-0 native and IMSM, LVM, the guard on a real kernel, kill -9 in the guest,
# null_blk) boot a software-emulated VM each: make test-vm runs them (about 30 minutes), CI after make test.
# The tests refuse a known truth this machine cannot carry (tests/conftest.py: CAP_FIT refuse, the test skipped with
# the measured reason); nbval runs its notebooks at their defaults, as a user would (caps lowered to fit: the
# notebooks' conftest.py), among the root tests, 10_cluster's cells in the group that makes hosts.
# The suite runs in parts: the tests that need no root (the library's logic, notebooks on directories, the reports,
# the docs) spread over TEST_WORKERS processes (pytest-xdist; default: one a CPU); then the root tests on ROOT_WORKERS
# (three), each module's on one worker (its campaign made once) and the modules that make hosts on one
# (tests/conftest.py: worker_group): their runs wait on the throttle, not the CPUs (beside two others,
# test_quickstart's campaign took 89.6 s, 88.3 s alone; the sequential campaign 47.5 s, 47.1 s alone); then the root
# tests marked alone one at a time, the ones held at the most this machine carries, which another test's runs beside
# them would take their share of. Every part runs whatever the one before gave; make fails if any failed.
# TEST_BUDGET_S: the suite's budget, its parts together (tests/conftest.py fails a part when the suite took longer
# by more than its stated margin, 15%, after --durations has named the 15 slowest tests): 900 s, what issue 49 asks
# of make test; empty: no budget.
TEST_BUDGET_S ?= 900
TEST_WORKERS ?= logical
PYTEST_SUITE = $(BIN)/python -m pytest tests -p no:cacheprovider --durations=15
# $(call two_parts,MARKERS): the tests of MARKERS that need no root on TEST_WORKERS; then the root ones on ROOT_WORKERS,
# each module's on one worker and the ones that make hosts (namespaces, links, sshds) on one (tests/conftest.py:
# worker_group); then the root ones marked alone, one at a time. All run; the recipe fails if any failed (pytest's
# 5, nothing selected, is no failure: a selection may have no test marked alone).
ROOT_WORKERS ?= 3
two_parts = $(PYTEST_SUITE) -m "($(1)) and not root" -n $(TEST_WORKERS); first=$$?; \
	$(PYTEST_SUITE) $(NBVAL_NOTEBOOKS) --nbval-lax -m "($(1)) and root and not alone" -n $(ROOT_WORKERS) --dist loadfile; \
	second=$$?; \
	$(PYTEST_SUITE) -m "($(1)) and root and alone"; third=$$?; \
	test $$first -eq 0 && test $$second -eq 0 && { test $$third -eq 0 || test $$third -eq 5; }
test: deps browser-deps app-deps
	$(BIN)/lint-imports
	export FLASHSCALE_SUITE_SINCE=$$(date +%s) FLASHSCALE_SUITE_BUDGET_S=$(TEST_BUDGET_S); \
	$(call two_parts,not vm and not long)

# The tests marked long (whole studies of notebooks, the longest campaigns, a cluster host killed mid-run): minutes each, so make test leaves
# them to this target, which CI runs after it; in two parts as make test's (the ones that need no root in parallel).
test-long: deps browser-deps app-deps
	$(call two_parts,long and not vm)

# make test on a machine of half the speed: every process it starts runs inside a cgroup of ours whose cpu quota is
# half of the CPUs' time (scripts/half_cpu.py: recorded in a manifest, removed after). The same parts as make test
# (HALF_CPU_TESTS: their markers), with no budget: the budget is this machine's at full speed. A known truth a test
# bed cannot carry there is measured and refused, and its test skipped with the reason (tests/conftest.py).
HALF_CPU_TESTS ?= not vm and not long
test-half-cpu: deps browser-deps app-deps
	$(BIN)/python scripts/half_cpu.py --share 0.5 -- bash -c '$(call two_parts,$(HALF_CPU_TESTS))'

test-vm: deps deps-vm
	$(BIN)/python -m pytest tests -m vm -p no:cacheprovider

# make test where nothing is installed (scripts/fresh_root.py): a Debian 12 root of the important variant, what every
# Debian install has, plus git, make and python3; the repository cloned inside, make test run there chrooted in a
# mount namespace of its own with the kernel's /dev, /proc and /sys bound in. Its folder is recorded in a manifest and
# removed after; apt's and pip's downloads persist in /var/cache/flashscale/fresh-root. FRESH_ROOT_COMMAND: what runs.
FRESH_ROOT_COMMAND ?= make test
test-fresh-root:
	@command -v mmdebstrap >/dev/null 2>&1 || bash scripts/apt-install.sh "make test-fresh-root" mmdebstrap
	$(PYTHON) scripts/fresh_root.py -- $(FRESH_ROOT_COMMAND)

test-fast: deps
	$(BIN)/lint-imports
	$(BIN)/python -m pytest tests -m "not root and not notebook and not lab"

deps: system-deps $(STAMP)

# fio and the file system tools come from Debian's packages: installed when missing and we are root,
# otherwise a message says exactly what to install. qemu-nbd serves an emulated cluster host's devices over its
# link (the cluster's STORAGE nbd). OpenSSH's client reaches real hosts; its server (never started as a service)
# runs only inside the SSH lab's network namespaces, for the tests and make demo-ssh-cluster.
system-deps:
	@missing=(); \
	for tool in fio:fio mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs mkfs.ext4:e2fsprogs blkdiscard:util-linux wipefs:util-linux losetup:mount ip:iproute2 tc:iproute2 qemu-nbd:qemu-utils ssh:openssh-client ssh-keygen:openssh-client sshd:openssh-server nsenter:util-linux; do \
	  command -v $${tool%%:*} >/dev/null 2>&1 || PATH=$$PATH:/usr/sbin:/sbin command -v $${tool%%:*} >/dev/null 2>&1 || missing+=($${tool##*:}); \
	done; \
	bash scripts/apt-install.sh "flashscale" $${missing[@]}

# bonnie++ and PostgreSQL (its server programs and pgbench) for the application workloads: 09_applications and
# their root tests. Debian's packages; flashscale makes its own throwaway cluster and never touches the system's.
# IOzone (seed 002) is not packaged by Debian and is left out.
app-deps:
	@missing=(); \
	command -v bonnie++ >/dev/null 2>&1 || PATH=$$PATH:/usr/sbin command -v bonnie++ >/dev/null 2>&1 || missing+=(bonnie++); \
	{ command -v pgbench >/dev/null 2>&1 && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || missing+=(postgresql); \
	bash scripts/apt-install.sh "the application workloads" $${missing[@]}

# bonnie++, pgbench and a many-files transfer beside fio on the emulated array, every run monitored.
applications: deps app-deps
	$(BIN)/flashscale run runners/applications.yaml
	@echo "Report: $(CURDIR)/reports/applications/09_applications.html"

# The VM lab (EMULATION vm): QEMU, Debian's kernel package (booted by virtme-ng over this machine's files), and the
# programs the guest runs from here: mdadm, lvm2, nvme-cli; virtme-ng needs a static busybox. The guest cannot
# write into this checkout, so the venv's and flashscale's bytecode is compiled here first (a guest that compiles
# pandas and scipy itself on every boot spends minutes on it under TCG).
VM_TOOLS := qemu-system-x86_64:qemu-system-x86 mdadm:mdadm lvm:lvm2 nvme:nvme-cli busybox:busybox-static
deps-vm: deps
	@missing=(); \
	for tool in $(VM_TOOLS); do \
	  PATH=$$PATH:/usr/sbin:/sbin command -v $${tool%%:*} >/dev/null 2>&1 || missing+=($${tool##*:}); \
	done; \
	ls /boot/vmlinuz-* >/dev/null 2>&1 || missing+=(linux-image-amd64); \
	bash scripts/apt-install.sh "the VM lab" $${missing[@]}
	@$(BIN)/python -m compileall -q -j 0 $(VENV)/lib lib >/dev/null

# Seed 000's comparison in the VM lab: runners/vm.yaml.
demo-vm: deps-vm
	$(BIN)/flashscale run runners/vm.yaml
	@echo "Report: $(CURDIR)/reports/vm/03_layout_tax.html"

# Headless Chromium for the report browser test and the screenshot (Debian's package; Playwright drives it). The
# node that Playwright's wheel ships needs libatomic.so.1, which a fresh Debian lacks (make test-fresh-root found it).
browser-deps:
	@missing=(); command -v chromium >/dev/null 2>&1 || missing+=(chromium); \
	PATH=$$PATH:/sbin:/usr/sbin ldconfig -p | grep -q 'libatomic\.so\.1 ' || missing+=(libatomic1); \
	bash scripts/apt-install.sh "the browser test and make screenshot" $${missing[@]}

# .venv holds exactly the versions of the lock (every file checked against its hash), then flashscale itself.
$(STAMP): $(LOCK) pyproject.toml
	@$(PYTHON) -c "import ensurepip, venv" 2>/dev/null || bash scripts/apt-install.sh "a Python venv" python3-venv
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(STAMP)

# pip-compile resolves pyproject.toml's dependencies and EXTRAS for this Python, with the hash of every file, then
# environment.yml takes the lock's versions. pip-tools lives in its own venv, never in the one the lock installs.
lock: $(TOOLS_VENV)/bin/pip-compile
	CUSTOM_COMPILE_COMMAND="make lock" $(TOOLS_VENV)/bin/pip-compile -q --generate-hashes --strip-extras \
	  --allow-unsafe --no-emit-find-links $(foreach extra,$(subst $(comma), ,$(EXTRAS)),--extra $(extra)) \
	  $(if $(UPGRADE),$(foreach package,$(UPGRADE),--upgrade-package $(package)),--upgrade) -o $(LOCK) pyproject.toml
	$(TOOLS_VENV)/bin/python scripts/environment_from_lock.py --lock $(LOCK) --out environment.yml

$(TOOLS_VENV)/bin/pip-compile:
	test -x $(TOOLS_VENV)/bin/python || $(PYTHON) -m venv $(TOOLS_VENV)
	$(TOOLS_VENV)/bin/python -m pip install -q $(PIP_TOOLS)

# The newest versions pyproject.toml allows, in their own venv (not in CI, not in make test): the fast tier and the
# layer contract there show a break (such as pandas 3's) before the lock moves to it. The lock's own test of the
# installed versions is left out: here they differ from the lock on purpose.
test-latest: system-deps
	test -x $(LATEST_VENV)/bin/python || $(PYTHON) -m venv $(LATEST_VENV)
	$(LATEST_VENV)/bin/python -m pip install -q --upgrade pip
	$(LATEST_VENV)/bin/python -m pip install -q --upgrade --upgrade-strategy eager -e '.[$(EXTRAS)]'
	$(LATEST_VENV)/bin/lint-imports
	$(LATEST_VENV)/bin/python -m pytest tests -p no:cacheprovider -m "$(FAST_TIER)" \
	  --deselect tests/test_lock.py::test_the_installed_packages_are_the_locks

# The documentation site (docs/: Sphinx, MyST and the PyData theme, the docs extra of the lock), built offline; every
# warning (a broken link, a page in no table of contents) is an error, as in tests/test_docs.py; every page is read
# anew (-E), for the reference pages are rendered from the code, which Sphinx does not watch.
docs: deps
	$(BIN)/sphinx-build -E -q -W --keep-going -n docs docs/_build/html
	@echo "Site: $(CURDIR)/docs/_build/html/index.html"

# A report a newcomer can open without root: fio-plot's bench-fio layout of real fio 3.33 output, shipped in
# tests/golden/imported/benchfio, imported and reported as runners/imported.yaml does (the first-reading tutorial).
# It needs only the Python venv ($(STAMP), not deps: no fio, no root). make docs copies $(SAMPLE)/site into the
# site when it is there (docs/conf.py).
sample-report: $(STAMP)
	rm -rf $(SAMPLE)
	$(BIN)/flashscale import tests/golden/imported/benchfio --to $(SAMPLE)/data \
	  --pattern '{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json' --map tests/golden/imported/benchfio-map.yaml
	$(BIN)/flashscale run runners/imported.yaml -p IMPORTED=$(SAMPLE)/data --reports $(SAMPLE)/site
	@echo "Report: $(CURDIR)/$(SAMPLE)/site/imported/imported.html"

# The reference in docs/*.md, generated from the code between each page's generated marks (docs/_ext/
# flashscale_docs.py): the commands, the parameters, the columns, the ceilings, the layers, and commands' outputs
# on the stored data. tests/test_reference_docs.py and make docs fail when a page is stale.
reference-docs: deps
	$(BIN)/python scripts/reference_docs.py

bench: deps
	$(BIN)/python benchmarks/bench_analysis.py
	$(BIN)/python benchmarks/bench_monitor.py
	$(BIN)/python benchmarks/bench_adaptive.py
	$(BIN)/python benchmarks/bench_harness.py
	$(BIN)/python benchmarks/bench_idle.py
	$(BIN)/python benchmarks/bench_import.py
	$(BIN)/python benchmarks/bench_cli.py

# What PRECISION buys against a fixed grid of 3 runs (benchmarks/bench_cost.py): seed 000's questions on the emulated
# array, each device's cap drawn before every run around a known mean, through the library's sweep and stopping rule,
# sequential tax test and intervals; rows kept in benchmarks/results/cost/<stamp>/ (--rescore, --simulated).
bench-cost: deps
	$(BIN)/python benchmarks/bench_cost.py

# Every error rate flashscale's verdicts and intervals state, measured by Monte Carlo on its own functions
# (benchmarks/bench_stats.py: the fixed and sequential tax tests, the throughput interval, the family's false
# discovery rate; benchmarks/stats_builds.py: the interval over builds); each setting's counts kept in
# benchmarks/results/stats/. Fails where a measured rate exceeds its stated one by more than 3 Monte Carlo errors.
bench-stats: deps
	$(BIN)/python benchmarks/bench_stats.py --stall
	$(BIN)/python benchmarks/stats_builds.py

# The prediction model against what it did not set (benchmarks/bench_predict.py): uncapped loop devices, the VM lab
# uncapped and its null_blk devices, the seeds' tables; predicted and measured at each layout's best point and over
# every point, each miss beyond 5% named with its term. CASES=seeds,loop,vm-layouts,vm-nullblk picks some.
CASES ?= seeds,loop,vm-layouts,vm-nullblk
bench-predict: deps deps-vm
	$(BIN)/python benchmarks/bench_predict.py --cases $(CASES)

# The study notebooks in order on the emulated array (runners/study.yaml): reports/study/index.html.
study: deps
	$(BIN)/flashscale run runners/study.yaml
	@echo "Report: $(CURDIR)/reports/study/index.html"

# 1 and 2 emulated hosts, each a network namespace with its own capped array and fio server, the data on local xfs
# and then across each host's capped link (qemu-nbd): runners/cluster.yaml.
demo-cluster: deps
	@command -v ip >/dev/null 2>&1 || PATH=$$PATH:/usr/sbin:/sbin command -v ip >/dev/null 2>&1 || \
	  { echo "make demo-cluster needs ip and tc (iproute2): apt-get install iproute2" >&2; exit 1; }
	$(BIN)/flashscale run runners/cluster.yaml
	@echo "Report: $(CURDIR)/reports/cluster/10_cluster.html"

# Two hosts over SSH, each a network namespace with its own sshd and two loop devices (scripts/ssh_lab.py makes and
# removes them, every one recorded in a manifest): btrfs RAID-0 built on each through the guard, measured by fio
# servers flashscale starts on each host on a root-only unix socket its SSH connection forwards, torn down
# (runners/ssh-cluster.yaml).
demo-ssh-cluster: deps
	$(BIN)/python scripts/ssh_lab.py runners/ssh-cluster.yaml
	@echo "Report: $(CURDIR)/reports/ssh-cluster/10_cluster.html"

# The SSH cluster's tests, the long faults included (sshd killed mid-campaign, a fio server killed mid-campaign, kill -9
# of the driver then reap, 8 hosts at once), and the attacker's (an unprivileged user made for them: fio servers,
# shipped code, manifests, names); make test runs the rest of them.
test-ssh: deps
	FLASHSCALE_SSH_LONG=1 $(BIN)/python -m pytest tests/test_ssh_cluster.py tests/test_ssh_hosts.py tests/test_ssh_inventory.py tests/test_ssh_attacker.py tests/test_reap.py -p no:cacheprovider

# What make test-ssh runs that make test leaves (marker ssh_long): what CI runs after make test.
test-ssh-long: deps
	FLASHSCALE_SSH_LONG=1 $(BIN)/python -m pytest tests -m ssh_long -p no:cacheprovider

reference: deps
	$(BIN)/flashscale run runners/reference.yaml
	@echo "Report: $(CURDIR)/reports/reference/index.html"

# The quickstart with three repetitions of 10 s runs: make long-quickstart takes about 15 minutes.
long-quickstart: deps
	$(BIN)/flashscale run runners/quickstart.yaml -p REPETITIONS=3 -p RUNTIME_S=10 -p RAMP_S=2

# JupyterLab from .venv on 127.0.0.1:$(LAB_PORT), notebooks/ open, the flashscale kernel registered (--sys-prefix).
lab: deps
	$(BIN)/python scripts/lab.py --port $(LAB_PORT)

screenshot: deps browser-deps
	$(BIN)/python scripts/screenshot.py $(REPORT) docs/quickstart-report.png
	$(BIN)/python scripts/screenshot.py $(REPORT) docs/quickstart-conclusions.png --from "Efficiency and tax" --height 2000

clean-reports:
	@echo "Reports are in reports/ and measurements in data/campaigns/; remove them yourself if you mean to."
