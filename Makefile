# LAVA build. `make demo` and `make test` are the whole set-up on a fresh Debian 12 machine.
# Sources are found by wildcard: every src/**/*.cpp except src/cli/main.cpp goes into build/liblava.a,
# which both the `lava` binary and the test runner link.

CXX      ?= g++
# -Wno-psabi: without AVX-512 (an AVX2 machine), GCC warns at every inline function that takes or returns
# src/core/vec_math.hpp's 64-byte vectors that their calling convention changed in GCC 4.6. No such function crosses a
# library boundary, so the note says nothing about LAVA; a #pragma cannot silence it, as GCC reports it at the caller.
WARNINGS := -Wall -Wextra -Wno-psabi
CXXFLAGS ?= -std=c++20 -O3 -march=native -fno-math-errno -ffp-contract=off -fopenmp $(WARNINGS) -MMD -MP -Isrc
LDLIBS   := -lboost_program_options -lfmt -lz -lsentencepiece -lsentencepiece_train -fopenmp
BUILD    := build

# make PROFILE=1 builds the profiling build in build/prof: the per-op profile of `lava bench train --profile`, the
# GEMM work counters and the wrapper that times every OpenMP region (core/op_profile.hpp). The product build has
# none of them; make bench builds with them (make PROFILE=1 test runs the suites on it).
PROFILE  ?= 0
ifeq ($(PROFILE),1)
BUILD    := build/prof
CXXFLAGS += -DLAVA_PROFILE=1
endif

LIB_SRC  := $(filter-out src/cli/main.cpp,$(shell find src -name '*.cpp' | sort))
TEST_SRC := $(shell find tests -name '*.cpp' -not -path 'tests/fuzz/*' | sort)
LIB_OBJ  := $(LIB_SRC:%.cpp=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.cpp=$(BUILD)/obj/%.o)

# Debian packages LAVA needs to build and run its demo and tests.
# libsentencepiece-dev learns the subword units of `lava data bpe`; GNU parallel runs `lava sweep run`; slurm-wlm
# and munge the throwaway cluster of `make test-slurm`.
DEB_PKGS := g++ make libboost-program-options-dev libfmt-dev doctest-dev zlib1g-dev libsentencepiece-dev \
            dataset-fashion-mnist parallel slurm-wlm munge
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
NPROC    := $(shell nproc 2>/dev/null || echo 2)
JOBS     := -j$(NPROC)

.PHONY: all deps torch-deps test test-slurm demo sanitize bench clean data check-includes fuzz crosscheck

all: $(BUILD)/lava

# $(call install_missing,PACKAGES): apt-get installs those of the Debian PACKAGES that are not installed yet.
define install_missing
@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
if [ -n "$$missing" ]; then \
  echo "installing:" $$missing; \
  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
fi
endef

deps:
	$(call install_missing,$(DEB_PKGS))

# The PyTorch peer of make bench. Debian's torch calls whatever libblas.so.3 is installed: without
# libopenblas0-pthread that is the reference BLAS, tens of times slower, and every ratio against it is meaningless.
# libjemalloc2 is the peer's allocator in make bench: it keeps freed memory mapped, so the peer does not fault its
# large tensors in again every step (tools/bench-train.sh).
TORCH_PKGS := python3-torch libopenblas0-pthread libjemalloc2
torch-deps:
	$(call install_missing,$(TORCH_PKGS))

# Test sources compile at -O0 in the optimised build: the library they exercise stays at -O3, their own code is
# brute-force references and checks, which need no optimisation. Every test file at -O0 took about 230 CPU-seconds
# against about 290 at -O1, and the suite ran as fast (59.0 and 62.8 s against 61.5 and 59.0, alternated).
TEST_CXXFLAGS := $(subst -O3,-O0,$(CXXFLAGS))

# Precompiled headers: src/core/precompiled.hpp (standard and fmt headers) is force-included into every file. GCC
# uses a .gch only if it was built with the same flags, so each flag set (library, tests, and the sanitizer tree's
# own) gets a copy of the header in its own directory with its .gch beside it; -Winvalid-pch says if one is skipped.
PCH_LIB  := $(BUILD)/pch/lib/precompiled.hpp
PCH_TEST := $(if $(findstring -O3,$(CXXFLAGS)),$(BUILD)/pch/test/precompiled.hpp,$(PCH_LIB))

$(BUILD)/pch/%/precompiled.hpp: src/core/precompiled.hpp
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/pch/lib/precompiled.hpp.gch: $(BUILD)/pch/lib/precompiled.hpp
	$(CXX) $(CXXFLAGS) -x c++-header $< -o $@

$(BUILD)/pch/test/precompiled.hpp.gch: $(BUILD)/pch/test/precompiled.hpp
	$(CXX) $(TEST_CXXFLAGS) -x c++-header $< -o $@

$(BUILD)/obj/%.o: %.cpp $(PCH_LIB).gch
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -Winvalid-pch -include $(PCH_LIB) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.cpp $(PCH_TEST).gch
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Itests -Winvalid-pch -include $(PCH_TEST) -c $< -o $@

$(BUILD)/liblava.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/lava: $(BUILD)/obj/src/cli/main.o $(BUILD)/liblava.a
	$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/lava_tests: $(TEST_OBJ) $(BUILD)/liblava.a
	$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS)

# The test runner ends with the line `tests: N passed, M failed, K skipped` (tests/support/main.cpp). make test and
# make sanitize cut the cases into 16 parts a core and run them one process a core at a time, each core taking the
# next part when its last one ends (tests/support/run-sharded.sh: most cases use one thread), and sum their closing
# lines; `build/lava_tests` alone runs them all in one process.
test: deps
	@$(MAKE) --no-print-directory $(JOBS) $(BUILD)/lava $(BUILD)/lava_tests
	cd $(CURDIR) && LAVA_BIN=$(CURDIR)/$(BUILD)/lava tests/support/run-sharded.sh $(NPROC) $(BUILD)/lava_tests

# A throwaway single-node Slurm cluster (munged, slurmctld, slurmd as root, all in a temp dir) runs the translation
# table (experiments/paper/nmt.ini, quick scale) as a job array, one task requeued while it trains; its
# `lava report --tables paper` must equal `lava sweep run`'s but for the times (tests/sweep/test_slurm.sh).
test-slurm: deps
	@$(MAKE) --no-print-directory $(JOBS) $(BUILD)/lava
	LAVA_BIN=$(CURDIR)/$(BUILD)/lava bash tests/sweep/test_slurm.sh

# The demo's translation part (experiments/demo-nmt.sh: the sweep experiments/demo-nmt.ini and its lava report)
# trains soft attention, the exact marginal and variational attention for DEMO_STEPS updates each on the gettext
# corpus: equal updates, since soft attention does about three times as many a minute.
DEMO_STEPS ?= 3000
demo: deps
	@$(MAKE) --no-print-directory $(JOBS) $(BUILD)/lava
	$(BUILD)/lava toy
	LAVA=$(CURDIR)/$(BUILD)/lava experiments/demo-nmt.sh --steps $(DEMO_STEPS)

# The German-English corpus from Debian's gettext catalogs (a no-op once built; .deb files cached in data/debian-cache)
# and the VQA-style scenes from Fashion-MNIST (a few seconds; region features are computed when read).
data: deps
	@$(MAKE) --no-print-directory $(JOBS) $(BUILD)/lava
	$(BUILD)/lava data gettext --lang de --out data/gettext-de-en --cache data/debian-cache
	$(BUILD)/lava data scenes --out data/scenes

# LAVA against PyTorch on the same training step, alternating, in the same run (tools/bench-train.sh names the BLAS
# torch actually ran on every row and refuses a ratio against the reference BLAS); then GEMM, with both libraries'
# threads spinning briefly before they sleep (LAVA's as in training; OpenBLAS's 2^24 cycles): a thread woken from
# sleep for every call costs a 256^3 product more than its arithmetic (experiments/results/speed/README.md). The
# --shapes are the three products of one chunk of the enumerated output layer in bench-train.sh's marginal and var-enum steps (logits,
# dx, [dW; db]), so that their OpenBLAS ratio sits next to what the targets need. BENCH_ARGS go to bench-train.sh:
# `make bench BENCH_ARGS="--rounds 9"` takes the medians over 9 alternated rounds instead of 3 (about 3 times as long).
BENCH_CHUNK_SHAPES := 240x10000x256,240x256x10000,257x10000x240
BENCH_ARGS ?=
bench: deps torch-deps
	@$(MAKE) --no-print-directory $(JOBS) PROFILE=1 build/prof/lava
	tools/bench-train.sh --lava build/prof/lava $(BENCH_ARGS)
	OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=20000 OPENBLAS_THREAD_TIMEOUT=24 build/prof/lava bench gemm \
	  --shapes $(BENCH_CHUNK_SHAPES)

# LAVA against an independent float64 PyTorch implementation, tools/torch_reference.py (tests/README.md): for
# every task and variant it implements, from one initial model, the loss and every gradient at the first step,
# CROSSCHECK_STEPS Adam updates on fixed batches with dropout off, and every evaluation figure of the initial and
# trained model. Ends with the line `crosscheck: N passed, M failed` and fails if any check does. The files are
# written and checked one per core (xargs -P, --jobs), each in a one-thread process, and their lines printed in the files' order. Debian's torch reads libblas.so.3, which is
# OpenBLAS when libopenblas0-pthread is installed (reference BLAS otherwise, tens of times slower on large products);
# OPENBLAS_NUM_THREADS=1, since torch.set_num_threads(1) does not reach OpenBLAS, which keeps a thread per core.
CROSSCHECK_DIR  := $(BUILD)/crosscheck
# The tasks and their runs come from the task registry (`lava crosscheck-dump --list-tasks`, and `--list-runs` of
# each: a line FILE-STEM OPTIONS per dump, one per variant the reference implements for the task where the task's
# runs go over the variants), plus these translation runs ATTN:SCORE with one layer.
CROSSCHECK_SCORES := soft:general marginal:dot var-enum:dot
# Adam updates in each dump (the trajectory check's length): CI runs 50, a check by hand the default 200.
CROSSCHECK_STEPS ?= 200
crosscheck:
	@$(MAKE) --no-print-directory deps torch-deps
	@$(MAKE) --no-print-directory $(JOBS) $(BUILD)/lava
	@readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 | grep -q openblas || \
	  echo "crosscheck: warning: libblas.so.3 is not OpenBLAS; torch runs on reference BLAS"
	@rm -rf $(CROSSCHECK_DIR) && mkdir -p $(CROSSCHECK_DIR)
	@{ tasks=$$($(BUILD)/lava crosscheck-dump --list-tasks) || exit 1; \
	  for task in $$tasks; do $(BUILD)/lava crosscheck-dump --task $$task --list-runs || exit 1; done; \
	  for run in $(CROSSCHECK_SCORES); do \
	    attn=$${run%%:*}; score=$${run#*:}; \
	    echo "nmt-$$attn-$$score --task nmt --attn $$attn --score $$score --layers 1"; \
	  done; } > $(CROSSCHECK_DIR)/runs.txt
	@while read -r stem options; do \
	  echo "$(BUILD)/lava crosscheck-dump $$options --steps $(CROSSCHECK_STEPS) --threads 1 --quiet --out $(CROSSCHECK_DIR)/$$stem.safetensors"; \
	done < $(CROSSCHECK_DIR)/runs.txt | xargs -P $(NPROC) -I CMD sh -c CMD
	OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tools/torch_reference.py check --jobs $(NPROC) $(CROSSCHECK_DIR)/*.safetensors

# AddressSanitizer + UndefinedBehaviorSanitizer build of LAVA, in its own tree, under the whole test suite: the
# library and the `lava` binary the CLI tests run are instrumented; the test runner links the instrumented library
# with make test's own test objects (brute-force references and checks, not LAVA's code), which halves the stage's
# compile time. Mixing instrumented and plain objects is supported by both sanitizers; a template instantiated in a
# test object as well as in the library may run uninstrumented in-process, never in the `lava` binary. The test
# objects are built without LAVA_PROFILE, so the library is too (its headers would differ otherwise), and the
# profiling build's tests are skipped here as in make test. -Og and -g1 (line tables only: enough for file:line in
# sanitizer reports) keep CI short, and so does leaving out UBSan's vptr check, which instruments every access
# through a polymorphic class (LAVA has one dynamic_cast and downcasts nothing by static_cast). Both binaries link
# without PIE: the sanitizers' static data (UBSan's source locations and type descriptors, ASan's global descriptors)
# hold about a million pointers, which a position-independent executable relocates at every start. That made each of
# the suite's hundreds of `lava` runs start in 0.17 s instead of 0.08 s (20 runs of `lava --help`). The test suite
# "stand-ins" is left out: its cases run bash scripts against stand-in binaries (tools/bench-train.sh,
# run-sharded.sh) and none of LAVA's code, so the sanitizers have nothing to watch there (about 40 of the suite's
# 400 CPU-seconds under them).
SAN_FLAGS := -std=c++20 -Og -g1 -march=native -fno-math-errno -ffp-contract=off -fopenmp $(WARNINGS) -MMD -MP -Isrc \
             -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_LDLIBS := $(LDLIBS) -fsanitize=address,undefined -no-pie
sanitize: deps $(TEST_OBJ)
	@$(MAKE) --no-print-directory $(JOBS) BUILD=build/san CXXFLAGS="$(SAN_FLAGS)" \
	  LDLIBS="$(SAN_LDLIBS)" build/san/lava build/san/liblava.a
	$(CXX) $(SAN_FLAGS) $(TEST_OBJ) build/san/liblava.a -o build/san/lava_tests $(SAN_LDLIBS)
	ASAN_OPTIONS=detect_leaks=0 LAVA_CHILD_SANITIZED=1 LAVA_BIN=$(CURDIR)/build/san/lava \
	  tests/support/run-sharded.sh $(NPROC) build/san/lava_tests --test-suite-exclude=stand-ins

# Two checks of the include graph, not part of CI (the second compiles every file once, which takes minutes):
# 1. Layers. Every #include "DIR/..." in src/ names a layer the including file's layer may use: the layers run
#    core → gemm → tensor → autodiff → nn, prob → attention → train → tasks → cli, with data, eval and report beside
#    them (they use core only; train and above may use them), and sweep (grids of runs: core and report) under cli.
#    `LAYERS_OF_x` lists what layer x may include.
# 2. Every source and header under src/ (nested folders included) and tests/ compiled on its own (syntax only),
#    without the precompiled header the build force-includes, so that a file that leans on it for one of its own
#    #includes is caught. The kernel headers that #error outside their ISA translation units by design are skipped.
LAYERS_OF_core      := core
LAYERS_OF_gemm      := core gemm
LAYERS_OF_tensor    := core gemm tensor
LAYERS_OF_autodiff  := core gemm tensor autodiff
LAYERS_OF_nn        := core gemm tensor autodiff nn
LAYERS_OF_prob      := core gemm tensor autodiff prob
LAYERS_OF_attention := core gemm tensor autodiff nn prob attention
LAYERS_OF_data      := core data
LAYERS_OF_eval      := core eval
LAYERS_OF_report    := core report
LAYERS_OF_train     := core gemm tensor autodiff nn prob attention data eval report train
LAYERS_OF_tasks     := core gemm tensor autodiff nn prob attention data eval report train tasks
LAYERS_OF_sweep     := core report sweep
LAYERS_OF_cli       := core gemm tensor autodiff nn prob attention data eval report train tasks sweep cli
LAYER_NAMES := core gemm tensor autodiff nn prob attention data eval report train tasks sweep cli
ISA_ONLY_HEADERS := src/gemm/gemm_pack.hpp src/gemm/gemm_packed.hpp src/gemm/ukernel_simd.hpp src/gemm/x86_transpose.hpp \
                    src/gemm/x86_transpose16.hpp
ALL_SOURCES := $(shell find src tests -name '*.cpp' -o -name '*.hpp' | sort)
check-includes:
	@bad=0; \
	$(foreach layer,$(LAYER_NAMES),for f in $$(find src/$(layer) -name '*.cpp' -o -name '*.hpp'); do \
	  for inc in $$(sed -n 's|^#include "\([a-z_]*\)/.*|\1|p' $$f | sort -u); do \
	    case " $(LAYERS_OF_$(layer)) " in (*" $$inc "*) ;; \
	      (*) echo "check-includes: $$f includes $$inc/, above or beside its layer $(layer)" >&2; bad=1;; esac; \
	  done; done;) \
	[ -z "$$(cd src && ls -d */ | tr -d / | grep -vxE '$(subst $() ,|,$(LAYER_NAMES))')" ] || { echo "check-includes: src/ has a folder outside the layers:" $$(cd src && ls -d */ | tr -d / | grep -vxE '$(subst $() ,|,$(LAYER_NAMES))') >&2; bad=1; }; \
	[ $$bad = 0 ] && echo "check-includes: no include runs back up the layers"; [ $$bad = 0 ]
	@printf '%s\n' $(filter-out $(ISA_ONLY_HEADERS),$(ALL_SOURCES)) | \
	  xargs -P $(NPROC) -I{} sh -c 'printf "#include \"%s\"\n" {} | $(CXX) -std=c++20 -march=native -fopenmp -w -I. -Isrc -Itests \
	    -fsyntax-only -x c++ - || { echo "check-includes: {} does not compile on its own" >&2; exit 1; }'
	@echo "check-includes: every file compiles on its own"

# libFuzzer harnesses, one per reader (tests/fuzz/fuzz_*.cpp), built with clang 14 under AddressSanitizer and UBSan in
# build/fuzz (at an -O level FUZZ_OPT other than -O1, in build/fuzz-O0 and so on). Only the library sources the
# readers need are compiled (once, shared by every harness), so the build stays short. Each harness starts from its
# committed seed corpus tests/fuzz/corpus/NAME (small valid files) and runs FUZZ_SECONDS (or FUZZ_RUNS inputs, when
# set), one harness a core at a time (tests/fuzz/run-harnesses.sh); the inputs it finds go to corpus/NAME in that
# directory, crashes to crashes/NAME. A crash (sanitizer report, uncaught exception other than the input errors, leak,
# timeout) fails `make fuzz`, naming each harness that crashed.
FUZZ_CXX     ?= clang++-14
# CI builds the harnesses at -O0 (FUZZ_OPT=-O0, in build/fuzz-O0): its 1-second runs are a smoke test. The whole of
# `make fuzz FUZZ_SECONDS=1` took 174 CPU-seconds against 225 at -O1 (the 38 reader files compile in about 88 against
# 127), and each harness ran about half as many inputs in its second (paper_runs: 418 against 731). A fuzzing
# session by hand keeps -O1.
FUZZ_OPT     ?= -O1
# The directory's name joins the flags without spaces ("-O2 -fno-inline" builds in build/fuzz-O2-fno-inline).
fuzz_empty   :=
fuzz_space   := $(fuzz_empty) $(fuzz_empty)
FUZZ_DIR     := $(BUILD)/fuzz$(subst $(fuzz_space),,$(filter-out -O1,$(FUZZ_OPT)))
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?=
FUZZ_FLAGS   := -std=c++20 $(FUZZ_OPT) -g1 -march=native -fno-math-errno -ffp-contract=off $(WARNINGS) -MMD -MP -Isrc \
                -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_NAMES   := safetensors npy idx mo corpus questions alignment config toy_params model_metadata sweep_file run_record paper_runs
FUZZ_LIB_SRC := src/core/atomic_file.cpp src/core/read_file.cpp src/core/quote_input.cpp src/core/utf8.cpp src/core/json.cpp src/core/json_write.cpp \
                src/nn/safetensors.cpp src/data/npy_file.cpp src/data/idx_reader.cpp src/data/mo_file.cpp \
                src/data/parallel_corpus.cpp src/data/vocab.cpp src/data/tokenize.cpp src/data/vqa_questions.cpp src/data/scenes.cpp \
                src/data/scene_questions.cpp src/data/scene_captions.cpp \
                src/data/alignment.cpp src/cli/config_file.cpp src/tasks/toy/params.cpp src/tasks/model_file_checks.cpp \
                 src/core/json_lines.cpp src/sweep/sweep_file.cpp src/sweep/sweep_sections.cpp src/sweep/sweep_plan.cpp src/sweep/slurm_script.cpp \
                 src/sweep/run_evals.cpp src/sweep/redirected_command.cpp \
                 src/sweep/self_executable.cpp src/report/run_record.cpp src/report/run_table.cpp src/report/table.cpp \
                 src/report/paper_runs.cpp src/report/paper_table.cpp src/report/paper_figures.cpp src/report/paper_report.cpp \
                 src/report/paper_tables_nmt.cpp src/report/paper_tables_vqa.cpp
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.cpp=$(FUZZ_DIR)/obj/%.o)
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)

$(FUZZ_DIR)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -c $< -o $@

$(FUZZ_DIR)/liblava_readers.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/liblava_readers.a
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer $^ -o $@ -lboost_program_options -lfmt -lz

fuzz:
	@$(MAKE) --no-print-directory deps DEB_PKGS="clang-14 libclang-rt-14-dev libboost-program-options-dev libfmt-dev zlib1g-dev"
	@$(MAKE) --no-print-directory $(JOBS) $(FUZZ_BINS)
	tests/fuzz/run-harnesses.sh $(FUZZ_DIR) $(NPROC) \
	  $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS)) $(FUZZ_NAMES)

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_NAMES:%=$(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.d)

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/obj/src/cli/main.d
