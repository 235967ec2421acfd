#pragma once
// Writing an output file so that a reader sees the old bytes or the new, never a part, and so that
// a link planted at the path or beside it is never written through.

#include <expected>
#include <string>
#include <string_view>

namespace racktwin {

// Writes `bytes` to a new temporary file beside `path` (created exclusively, so an existing file or
// symbolic link of that name is never opened), flushes it to disk and renames it onto `path`.
// A symbolic link at `path` is replaced, not followed. The new file gets the usual permissions
// (0666 less the umask). On failure `path` is untouched and the error says what failed.
std::expected<void, std::string> write_file_atomically(const std::string& path,
                                                       std::string_view bytes);

}  // namespace racktwin
