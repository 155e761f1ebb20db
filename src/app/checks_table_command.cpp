// The hidden "__checks-table" subcommand: docs/CHECKS.md's generated tables (the checks and
// their fault codes, doctor/checks_doc.h), printed, or put into the file with --write.
#include "app/cli_common.h"
#include "core/files.h"
#include "core/output_file.h"
#include "doctor/checks_doc.h"

#include <memory>
#include <string>

namespace gpucheck::app {

Command add_checks_table_command(CLI::App& root) {
  auto* sub = root.add_subcommand("__checks-table", "internal: docs/CHECKS.md's generated tables")
                  ->group("");
  auto file = std::make_shared<std::string>();
  sub->add_option("--write", *file,
                  "Put the tables into this copy of docs/CHECKS.md, between their markers");
  return {sub, [file]() {
            if (file->empty()) {
              write_stdout(doctor::checks_table_markdown() + "\n" + doctor::codes_table_markdown());
              return ExitCode::kOk;
            }
            const std::string doc = read_input_file(*file, kMaxConfigBytes, "--write");
            std::string updated;
            try {
              updated = doctor::with_generated_tables(doc);
            } catch (const std::runtime_error& e) {
              throw UsageError(std::string("--write: ") + *file + ": " + e.what());
            }
            // Untouched when current: the file's time says when a table last changed.
            if (updated != doc) write_output_file(*file, updated, "--write");
            return ExitCode::kOk;
          }};
}

}  // namespace gpucheck::app
