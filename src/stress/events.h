// The JSON lines a stress child writes on its result pipe and the parent reads: one protocol,
// named once.
#pragma once

namespace gpucheck::stress::event {

inline constexpr const char* kKey = "event";
inline constexpr const char* kStarted = "started";      // the device is open: identity, memory
inline constexpr const char* kStatus = "status";        // about once a second: progress, telemetry
inline constexpr const char* kRecord = "record";        // one test finished: its record
inline constexpr const char* kTelemetry = "telemetry";  // the run's telemetry summary
inline constexpr const char* kDone = "done";  // everything was written; data.stopped_by names
                                              // the signal that ended the tests early
inline constexpr const char* kPayload = "data";
inline constexpr const char* kStoppedBy = "stopped_by";

}  // namespace gpucheck::stress::event
