// Every key of the gpucheck/1 JSON document, defined once. Keys are stable: lower_snake.
#pragma once

#include <string_view>

namespace gpucheck::keys {

using K = std::string_view;

// Document
inline constexpr K kSchema = "schema";
inline constexpr K kSchemaVersion = "gpucheck/1";
inline constexpr K kCommand = "command";
inline constexpr K kProvenance = "provenance";
inline constexpr K kHost = "host";
inline constexpr K kCpu = "cpu";
inline constexpr K kMemory = "memory";
inline constexpr K kBackends = "backends";
inline constexpr K kResults = "results";
inline constexpr K kDevices = "devices";
inline constexpr K kErrors = "errors";

// Provenance
inline constexpr K kGpucheckVersion = "gpucheck_version";
inline constexpr K kGitCommit = "git_commit";
inline constexpr K kTime = "time";
inline constexpr K kArgv = "argv";
inline constexpr K kEnvironment = "environment";
inline constexpr K kBackendsBuilt = "backends_built";
inline constexpr K kLibraries = "libraries";

// Host
inline constexpr K kHostname = "hostname";
inline constexpr K kOs = "os";
inline constexpr K kOsId = "os_id";
inline constexpr K kOsVersion = "os_version";
inline constexpr K kKernel = "kernel";
inline constexpr K kArch = "arch";
inline constexpr K kVirtualization = "virtualization";  // bare_metal | container | wsl
inline constexpr K kContainerRuntime = "container_runtime";
inline constexpr K kHypervisor = "hypervisor";  // bool: x86 cpuinfo "hypervisor" flag (a VM)
// [{pci_bus_id, vendor}]: the display-class PCI functions (the GPUs on the bus, served or not)
inline constexpr K kDisplayDevices = "display_devices";

// CPU
inline constexpr K kModel = "model";
inline constexpr K kVendor = "vendor";
inline constexpr K kSockets = "sockets";
inline constexpr K kCores = "cores";
inline constexpr K kThreads = "threads";
inline constexpr K kMhzCurrent = "mhz_current";
inline constexpr K kMhzMax = "mhz_max";
inline constexpr K kMhzMin = "mhz_min";
inline constexpr K kCaches = "caches";
inline constexpr K kLevel = "level";
inline constexpr K kType = "type";
inline constexpr K kSizeBytes = "size_bytes";
inline constexpr K kSharedByThreads = "shared_by_threads";
inline constexpr K kNumaNodes = "numa_nodes";
inline constexpr K kIsa = "isa";
inline constexpr K kFlags = "flags";

// CPU ISA extensions: booleans under "isa", named as Linux's cpuinfo flags name them
inline constexpr K kIsaSse4_2 = "sse4_2";
inline constexpr K kIsaAvx = "avx";
inline constexpr K kIsaAvx2 = "avx2";
inline constexpr K kIsaFma = "fma";
inline constexpr K kIsaF16c = "f16c";
inline constexpr K kIsaAvx512f = "avx512f";
inline constexpr K kIsaAvx512dq = "avx512dq";
inline constexpr K kIsaAvx512cd = "avx512cd";
inline constexpr K kIsaAvx512bw = "avx512bw";
inline constexpr K kIsaAvx512vl = "avx512vl";
inline constexpr K kIsaAvx512Vnni = "avx512_vnni";
inline constexpr K kIsaAvx512Bf16 = "avx512_bf16";
inline constexpr K kIsaAvx512Fp16 = "avx512_fp16";
inline constexpr K kIsaAmxTile = "amx_tile";
inline constexpr K kIsaAmxInt8 = "amx_int8";
inline constexpr K kIsaAmxBf16 = "amx_bf16";
inline constexpr K kIsaNeon = "neon";  // cpuinfo Features "asimd"
inline constexpr K kIsaSve = "sve";
inline constexpr K kIsaSve2 = "sve2";
inline constexpr K kIsaAsimdhp = "asimdhp";  // fp16 arithmetic in Advanced SIMD
inline constexpr K kIsaBf16 = "bf16";
inline constexpr K kIsaI8mm = "i8mm";

// Memory
inline constexpr K kTotalBytes = "total_bytes";
inline constexpr K kAvailableBytes = "available_bytes";
inline constexpr K kFreeBytes = "free_bytes";
inline constexpr K kSwapTotalBytes = "swap_total_bytes";

// Backend sections
inline constexpr K kName = "name";
inline constexpr K kStatus = "status";  // available | unavailable | failed | not_built
inline constexpr K kReason = "reason";
inline constexpr K kPlatforms = "platforms";
inline constexpr K kVersion = "version";
inline constexpr K kPath = "path";
inline constexpr K kDetail = "detail";

// OpenCL probe: loader, environment, ICD files, vendor libraries, platforms
inline constexpr K kError = "error";  // one failed query or load: "CL_INVALID_VALUE (-30)"
inline constexpr K kRaw = "raw";      // the number behind a bitfield or version
inline constexpr K kLoader = "loader";
inline constexpr K kKind = "kind";
inline constexpr K kRealPath = "real_path";
inline constexpr K kOtherCopies = "other_copies";
inline constexpr K kOpenclVersion = "opencl_version";
inline constexpr K kEnv = "env";
inline constexpr K kEffect = "effect";
inline constexpr K kIcdSource = "icd_source";
inline constexpr K kSource = "source";
inline constexpr K kExists = "exists";
inline constexpr K kIcdFiles = "icd_files";
inline constexpr K kLibrary = "library";
inline constexpr K kLoads = "loads";
inline constexpr K kResolvedPath = "resolved_path";
inline constexpr K kIcdEntryPoints = "icd_entry_points";
inline constexpr K kDuplicateOf = "duplicate_of";
inline constexpr K kUnregisteredVendorLibraries = "unregistered_vendor_libraries";
inline constexpr K kRegistered = "registered";  // icd | environment | none
inline constexpr K kRegisteredBy = "registered_by";
inline constexpr K kIcdLine = "icd_line";
inline constexpr K kPlatform = "platform";
inline constexpr K kIndex = "index";
inline constexpr K kProfile = "profile";
inline constexpr K kExtensions = "extensions";
inline constexpr K kHostTimerResolutionNs = "host_timer_resolution_ns";
inline constexpr K kIcdSuffix = "icd_suffix";
inline constexpr K kFamily = "family";
// OpenCL ICD isolation after a failed probe: each ICD probed alone in its own child
inline constexpr K kIcdIsolation = "icd_isolation";
inline constexpr K kCulprits = "culprits";  // the ICDs whose lone probe failed
inline constexpr K kFine = "fine";          // the ICDs whose lone probe succeeded
inline constexpr K kIcds = "icds";
inline constexpr K kIcd = "icd";
inline constexpr K kOutcome = "outcome";  // ok | failed
inline constexpr K kWhat = "what";        // what happened to its child or its enumeration

// Devices (probe) and result records (bench)
inline constexpr K kDevice = "device";
inline constexpr K kStableId = "stable_id";
inline constexpr K kDeviceUuid = "device_uuid";
inline constexpr K kPciBusId = "pci_bus_id";
inline constexpr K kDeviceName = "device_name";
inline constexpr K kBackend = "backend";
inline constexpr K kProperties = "properties";
inline constexpr K kOp = "op";
inline constexpr K kImpl = "impl";
inline constexpr K kDtype = "dtype";
inline constexpr K kComputeType = "compute_type";
inline constexpr K kShape = "shape";
inline constexpr K kTransfers = "transfers";
inline constexpr K kTimeS = "time_s";
inline constexpr K kMedian = "median";
inline constexpr K kMin = "min";
inline constexpr K kMax = "max";
inline constexpr K kStddev = "stddev";
inline constexpr K kReps = "reps";
inline constexpr K kTruncated = "truncated";
inline constexpr K kThroughput = "throughput";
inline constexpr K kValue = "value";
inline constexpr K kUnit = "unit";
inline constexpr K kPeakFraction = "peak_fraction";
// In a record's context: the dense peak at the region's mean and at NVML's maximum SM clock.
inline constexpr K kPeakTflopsAtMeanSmClock = "peak_tflops_at_mean_sm_clock";
inline constexpr K kPeakTflopsAtMaxSmClock = "peak_tflops_at_max_sm_clock";
inline constexpr K kPeakFractionAtMaxSmClock = "peak_fraction_at_max_sm_clock";
inline constexpr K kSpeedupVsCpu = "speedup_vs_cpu";
inline constexpr K kBaselineDtype = "baseline_dtype";
inline constexpr K kVerification = "verification";
inline constexpr K kMaxRelError = "max_rel_error";
inline constexpr K kTolerance = "tolerance";
inline constexpr K kMethod = "method";
inline constexpr K kFirstBadIndex = "first_bad_index";
inline constexpr K kContext = "context";
inline constexpr K kScaledFrom = "scaled_from";
inline constexpr K kBytesNeeded = "bytes_needed";
inline constexpr K kBytesLimit = "bytes_limit";

// Shapes
inline constexpr K kN = "n";
inline constexpr K kM = "m";
inline constexpr K kKk = "k";
inline constexpr K kC = "c";
inline constexpr K kH = "h";
inline constexpr K kW = "w";
inline constexpr K kR = "r";
inline constexpr K kS = "s";
inline constexpr K kStride = "stride";
inline constexpr K kPad = "pad";
inline constexpr K kLayout = "layout";
inline constexpr K kBytes = "bytes";
inline constexpr K kDirection = "direction";
inline constexpr K kHostMemory = "host_memory";
inline constexpr K kMode = "mode";
inline constexpr K kCalls = "calls";
inline constexpr K kD2hEachCall = "d2h_each_call";

// CUDA backend: driver, runtime, libraries, NVML
inline constexpr K kDriver = "driver";
inline constexpr K kRuntime = "runtime";
inline constexpr K kFinding = "finding";  // no_driver | stub | init_failed | too_old | ...
inline constexpr K kLoaded = "loaded";
inline constexpr K kCudaVersion = "cuda_version";
inline constexpr K kInitResult = "init_result";
inline constexpr K kDevNodes = "dev_nodes";
inline constexpr K kUsable = "usable";
inline constexpr K kHeaders = "headers";
inline constexpr K kNvml = "nvml";
inline constexpr K kPeerAccess = "peer_access";
inline constexpr K kDriverVersion = "driver_version";
inline constexpr K kNvmlVersion = "nvml_version";
inline constexpr K kNames = "names";
inline constexpr K kUnmatched = "unmatched";
// doctor's CUDA load run (backends[cuda].under_load) and the NVML readings it judges
inline constexpr K kUnderLoad = "under_load";
inline constexpr K kWorkload = "workload";
inline constexpr K kSeconds = "seconds";
// when each load child was ready (device open) and started each cell, in s from the spawn
inline constexpr K kTimeline = "timeline";
inline constexpr K kReadyS = "ready_s";
inline constexpr K kCells = "cells";
inline constexpr K kLabel = "label";
inline constexpr K kClocksEventReasons = "clocks_event_reasons";
inline constexpr K kPcieLinkGen = "pcie_link_gen";
inline constexpr K kPcieLinkWidth = "pcie_link_width";
inline constexpr K kNvmlSamples = "nvml_samples";
inline constexpr K kMigDevices = "mig_devices";

// Doctor: one entry of "checks" per check run
inline constexpr K kChecks = "checks";
inline constexpr K kId = "id";
inline constexpr K kEvidence = "evidence";
inline constexpr K kFix = "fix";
inline constexpr K kAction = "action";                   // doctor: the repair a finding calls for
inline constexpr K kRecoveryAction = "recovery_action";  // the same in NVML's recovery words

// qualify: the profile judged and its verdicts (one per requirement, per device for "each")
inline constexpr K kQualify = "qualify";
inline constexpr K kStrict = "strict";
inline constexpr K kVerdict = "verdict";  // met | unmet | skip (qualify); same | regression | ...
inline constexpr K kVerdicts = "verdicts";
inline constexpr K kSummary = "summary";
inline constexpr K kRequirement = "requirement";
inline constexpr K kMeasured = "measured";
inline constexpr K kThreshold = "threshold";
inline constexpr K kLine = "line";
inline constexpr K kDescription = "description";
inline constexpr K kMet = "met";
inline constexpr K kUnmet = "unmet";
inline constexpr K kSkip = "skip";

// report compare: matched result records of two documents
inline constexpr K kComparison = "comparison";
inline constexpr K kBase = "base";
inline constexpr K kNew = "new";
inline constexpr K kMatch = "match";
inline constexpr K kFailOnMissing = "fail_on_missing";
inline constexpr K kRows = "rows";
inline constexpr K kMetric = "metric";
inline constexpr K kChange = "change";

// Sweeps (bench --sweep): per device, dtype, layout and transfers, the sizes and the break-even
inline constexpr K kSweep = "sweep";
inline constexpr K kDefaultSizes = "default_sizes";  // bench: the sizes chosen per device
inline constexpr K kWhy = "why";
inline constexpr K kParameter = "parameter";  // what a size counts: elements, m=n=k, batch n
inline constexpr K kSizes = "sizes";
inline constexpr K kSeries = "series";
inline constexpr K kPoints = "points";
inline constexpr K kSize = "size";
inline constexpr K kBeatsCpu = "beats_cpu";
inline constexpr K kBreakEven = "break_even";  // the smallest size, or null: none in range

// Verdicts to trust. Bench rounds and kept samples (time_s), the statistics of
// report compare (several bases, rank test, NOISY).
inline constexpr K kSamples = "samples";             // time_s: ≤ 64 repetitions, seconds
inline constexpr K kRoundMedians = "round_medians";  // time_s: one median per round, seconds
inline constexpr K kBases = "bases";                 // comparison: every base document
inline constexpr K kAlpha = "alpha";                 // comparison: the rank test's level
inline constexpr K kPValue = "p_value";              // row: Mann-Whitney U, two-sided
inline constexpr K kBand = "band";                   // row: the base runs' relative band
// row: "spread", the new run's relative spread (kSpread, defined with the multi-GPU keys)
inline constexpr K kBaseRecords = "base_records";  // row: how many bases held the cell

// Library choices: which cuDNN engine or cuBLASLt algorithm a record ran, and compare's CHANGED.
inline constexpr K kChoice = "choice";           // record and row: {library, version, id, ...}
inline constexpr K kBaseChoice = "base_choice";  // row of a CHANGED cell: the base's choice id
inline constexpr K kNewChoice = "new_choice";    // row of a CHANGED cell: the new run's
inline constexpr K kFailOnChanged = "fail_on_changed";
inline constexpr K kBetweenRuns = "between_runs";  // row: spread of the bases' medians / base
inline constexpr K kAllowance = "allowance";       // row: the between-run allowance of its kind
inline constexpr K kAllowanceS = "allowance_s";    // row: absolute allowance below the floor
inline constexpr K kKnobs = "knobs";
inline constexpr K kAlgo = "algo";
inline constexpr K kTile = "tile";
inline constexpr K kStages = "stages";
inline constexpr K kSplitK = "split_k";
inline constexpr K kCandidates = "candidates";

// `gpucheck stress` — its section, per-device verdicts, test records, telemetry.
inline constexpr K kStress = "stress";
inline constexpr K kDurationS = "duration_s";
inline constexpr K kTests = "tests";
inline constexpr K kTest = "test";
inline constexpr K kDtypes = "dtypes";
inline constexpr K kMemoryFraction = "memory_fraction";
inline constexpr K kWindowS = "window_s";
inline constexpr K kClockFloor = "clock_floor";
inline constexpr K kCheckEvery = "check_every";
inline constexpr K kNoCheck = "no_check";
inline constexpr K kSeed = "seed";
inline constexpr K kGemmSize = "gemm_size";
inline constexpr K kReasons = "reasons";
inline constexpr K kNotes = "notes";
inline constexpr K kRecords = "records";
inline constexpr K kTelemetry = "telemetry";
inline constexpr K kIterations = "iterations";
inline constexpr K kWindows = "windows";
inline constexpr K kMinWindow = "min_window";
inline constexpr K kFirstWindow = "first_window";
inline constexpr K kStartS = "start_s";
inline constexpr K kChecking = "checking";
inline constexpr K kResultBuffers = "result_buffers";
inline constexpr K kBatch = "batch";
inline constexpr K kBitwise = "bitwise";
inline constexpr K kResultsChecksummed = "results_checksummed";
inline constexpr K kFullChecks = "full_checks";
inline constexpr K kFullChecksSkipped = "full_checks_skipped";
inline constexpr K kMismatchedResults = "mismatched_results";
inline constexpr K kMismatchedElements = "mismatched_elements";
inline constexpr K kFirstBadIteration = "first_bad_iteration";
inline constexpr K kReference = "reference";
inline constexpr K kBytesTested = "bytes_tested";
inline constexpr K kFractionOfFree = "fraction_of_free";
inline constexpr K kFreeBytesAtStart = "free_bytes_at_start";
inline constexpr K kPasses = "passes";
inline constexpr K kRounds = "rounds";
inline constexpr K kChunks = "chunks";
inline constexpr K kInPass = "in_pass";
inline constexpr K kAllocationStopped = "allocation_stopped";
// stress memory: the part of the allocation the passes tested to fit --duration, and why
inline constexpr K kFittedToDuration = "fitted_to_duration";
// a stress child's plan: when its tests must be over (CLOCK_MONOTONIC seconds)
inline constexpr K kDeadlineS = "deadline_s";
inline constexpr K kCopy = "copy";
inline constexpr K kMismatches = "mismatches";
inline constexpr K kFirstBadOffset = "first_bad_offset";
inline constexpr K kExpected = "expected";
inline constexpr K kRead = "read";
inline constexpr K kPattern = "pattern";
inline constexpr K kBytesMoved = "bytes_moved";
inline constexpr K kTransfersVerified = "transfers_verified";
// stress copy: each direction's GB/s with both running at once, and the copies queued in each
inline constexpr K kH2dGbps = "h2d_gbps";
inline constexpr K kD2hGbps = "d2h_gbps";
inline constexpr K kInFlight = "in_flight";
inline constexpr K kIntervalMs = "interval_ms";
inline constexpr K kSmClockMhz = "sm_clock_mhz";
inline constexpr K kMemClockMhz = "mem_clock_mhz";
inline constexpr K kTemperatureC = "temperature_c";
inline constexpr K kPowerW = "power_w";
inline constexpr K kMean = "mean";
inline constexpr K kMaxSmClockMhz = "max_sm_clock_mhz";
inline constexpr K kCounters = "counters";
inline constexpr K kBefore = "before";
inline constexpr K kAfter = "after";
inline constexpr K kDelta = "delta";
inline constexpr K kXid = "xid";
inline constexpr K kXidWatch = "xid_watch";
inline constexpr K kCode = "code";
inline constexpr K kLines = "lines";
// Counters a device reads before and after (DeviceTelemetry::health_counters), by name.
inline constexpr K kCounterEccVolatileCorrected = "ecc_volatile_corrected";
inline constexpr K kCounterEccVolatileUncorrected = "ecc_volatile_uncorrected";
inline constexpr K kCounterRemappedRowsCorrectable = "remapped_rows_correctable";
inline constexpr K kCounterRemappedRowsUncorrectable = "remapped_rows_uncorrectable";
inline constexpr K kCounterRemapPending = "remap_pending";
inline constexpr K kCounterRemapFailure = "remap_failure";
inline constexpr K kCounterPcieReplay = "pcie_replay";
inline constexpr K kCounterNvlinkErrors = "nvlink_errors";
inline constexpr K kCounterViolationPowerNs = "violation_power_ns";
inline constexpr K kCounterViolationThermalNs = "violation_thermal_ns";
inline constexpr K kCounterViolationSyncBoostNs = "violation_sync_boost_ns";
inline constexpr K kCounterViolationBoardLimitNs = "violation_board_limit_ns";
inline constexpr K kCounterViolationReliabilityNs = "violation_reliability_ns";
inline constexpr K kStoppedBy = "stopped_by";  // SIGINT, SIGTERM, SIGHUP: the run ended early
// doctor as a node health check (--quick, --timeout, --state, --format oneline)
inline constexpr K kHealth = "health";  // the section: verdict healthy | unhealthy | unknown
inline constexpr K kQuick = "quick";
inline constexpr K kTimeoutS = "timeout_s";
inline constexpr K kExitCode = "exit_code";
inline constexpr K kFailing = "failing";
inline constexpr K kUnanswered = "unanswered";
inline constexpr K kStateFile = "state_file";
inline constexpr K kEventsRaised = "events_raised";
inline constexpr K kStateSaved = "state_saved";    // false: the write failed (said on stderr)
inline constexpr K kStateDamage = "state_damage";  // the file was damaged and set aside
inline constexpr K kEventCount = "count";          // events folded into one (more than 1)
inline constexpr K kUnacknowledged = "unacknowledged";
inline constexpr K kCheck = "check";

// report fleet, the slow node among many (groups of records, outliers per node)
inline constexpr K kFleet = "fleet";
inline constexpr K kDocuments = "documents";
inline constexpr K kRules = "rules";
inline constexpr K kGroups = "groups";
inline constexpr K kMembers = "members";
inline constexpr K kOutliers = "outliers";
inline constexpr K kNodes = "nodes";
inline constexpr K kMad = "mad";
inline constexpr K kZScore = "z_score";       // modified z-score, 0.6745 (x - median) / MAD
inline constexpr K kDeviation = "deviation";  // (x - median) / median
inline constexpr K kOutlier = "outlier";
inline constexpr K kWorst = "worst";  // this node's worst GPU in its group
inline constexpr K kHigherIsBetter = "higher_is_better";
inline constexpr K kZThreshold = "z_threshold";
inline constexpr K kSmallFleetNodes = "small_fleet_nodes";
inline constexpr K kSmallFleetDrop = "small_fleet_drop";
inline constexpr K kFailOnOutlier = "fail_on_outlier";

// The CPU's BLAS loaded at run time (probe: backends[cpu] device
// properties.blas; bench: a CPU record's context.blas), the kernel it runs and who chose it
inline constexpr K kBlas = "blas";
inline constexpr K kBlasIntBits = "int_bits";  // 32 (LP64) or 64 (ILP64)
inline constexpr K kBlasDescription = "description";
inline constexpr K kBlasKernel = "kernel";  // OpenBLAS core, BLIS sub-configuration, MKL path
inline constexpr K kBlasConfig = "config";
inline constexpr K kBlasThreading = "threading";         // pthreads | openmp | sequential
inline constexpr K kBlasTried = "tried";                 // [{name, error}] before the one loaded
inline constexpr K kBlasKernelSource = "kernel_source";  // library | gpucheck | environment
inline constexpr K kBlasKernelReason = "kernel_reason";
inline constexpr K kBlasKernelRecommended = "kernel_recommended";  // what the ISA allows
inline constexpr K kBlasKernelBelowIsa = "kernel_below_isa";
inline constexpr K kBlasLibraryKernel = "library_kernel";  // what the library chose by itself
inline constexpr K kBlasKernelEnvironment = "kernel_environment";  // OPENBLAS_CORETYPE, ..._L2_SIZE
inline constexpr K kBlasSelectionFailed = "selected_kernel_failed";
// doctor: what a core set in the environment costs, GEMM f32 1024 measured both ways
inline constexpr K kBlasKernelCost = "kernel_cost";
inline constexpr K kBlasKeptTflops = "kept_tflops";
inline constexpr K kBlasRecommendedTflops = "recommended_tflops";
inline constexpr K kBlasSlowdown = "slowdown";
// Output for people: the GPU stack's versions in a bench document's provenance, as
// `--version -v` prints them (report/stack_versions.h)
inline constexpr K kVersions = "versions";
inline constexpr K kNvidiaDriver = "nvidia_driver";
inline constexpr K kCudaDriver = "cuda_driver";
inline constexpr K kCudaRuntime = "cuda_runtime";
inline constexpr K kCublas = "cublas";
inline constexpr K kCublaslt = "cublaslt";
inline constexpr K kCudnn = "cudnn";
inline constexpr K kOpenclLoader = "opencl_loader";
// Multi-GPU servers. NVML per GPU and link (backends[cuda].devices[].properties.nvml)
inline constexpr K kNvlink = "nvlink";
inline constexpr K kLinks = "links";
inline constexpr K kLink = "link";
inline constexpr K kState = "state";
inline constexpr K kRemotePciBusId = "remote_pci_bus_id";
inline constexpr K kRemoteDeviceType = "remote_device_type";
inline constexpr K kSpeedMbps = "speed_mbps";
inline constexpr K kSpeedCommonMbps = "speed_common_mbps";
inline constexpr K kLinkCount = "link_count";
inline constexpr K kErrorCounters = "error_counters";
inline constexpr K kFabric = "fabric";
// NVML per ordered pair of GPUs (backends[cuda].nvml.pairs)
inline constexpr K kPairs = "pairs";
inline constexpr K kGpu = "gpu";
inline constexpr K kPeer = "peer";
inline constexpr K kGpuUuid = "gpu_uuid";
inline constexpr K kPeerUuid = "peer_uuid";
inline constexpr K kCommonAncestor = "common_ancestor";
inline constexpr K kNvlinks = "nvlinks";
inline constexpr K kTopology = "topology";
inline constexpr K kP2p = "p2p";
// Result records of group cells: peer copies (shape.direction "p2p"), all-reduce, concurrency
inline constexpr K kSrc = "src";
inline constexpr K kDst = "dst";
inline constexpr K kBidirectional = "bidirectional";
inline constexpr K kEngine = "engine";
inline constexpr K kCopies = "copies";  // copies at once of a p2p fan (all_to_one, ...)
// context: each direction's median GB/s of copies both ways at once (p2p: src→dst, dst→src;
// host copies: h2d, d2h)
inline constexpr K kDirectionGbps = "direction_gbps";
inline constexpr K kDstUuid = "dst_uuid";
inline constexpr K kDstPciBusId = "dst_pci_bus_id";
inline constexpr K kAlgbw = "algbw";  // GB/s: bytes per device / time
inline constexpr K kBusbw = "busbw";  // GB/s: algbw · 2(n−1)/n for all-reduce (nccl-tests)
inline constexpr K kConcurrentWith = "concurrent_with";
// Context of a record timed under the host lock: its siblings waited (bench/host_lock.h).
inline constexpr K kHostTransfersAlone = "host_transfers_alone";
// doctor's multi-GPU readings: figures per GPU, peer copies and NVLink counters after the load
inline constexpr K kFigures = "figures";
inline constexpr K kSpread = "spread";
inline constexpr K kGbps = "gbps";
inline constexpr K kP2pUnderLoad = "p2p_under_load";
inline constexpr K kCountersAfterLoad = "counters_after_load";
inline constexpr K kIntervalS = "interval_s";  // seconds since the first reading
// GEMM tuning: in a GEMM or conv record's context, which parameters ran
inline constexpr K kTuning = "tuning";                       // tuned | cached | default
inline constexpr K kTuningParameters = "tuning_parameters";  // {"impl": ..., "parameters": {...}}
inline constexpr K kTuningNote = "tuning_note";              // why "default" without --no-tune

}  // namespace gpucheck::keys
