// JPEG files: the marker walk of inspect(), and decoding through libjpeg(-turbo).
//
// libjpeg reports a fatal error by calling error_exit, which must not return; its default ends
// the process. Ours longjmps back to the function that armed the jump buffer. The only functions
// that call into libjpeg (the `jpeg_guarded_*` below) hold no objects with destructors, and the
// libjpeg state lives in a JpegSession owned by their caller, so a jump skips no destructor and
// the session still frees libjpeg's memory afterwards.
#include "image/formats.hpp"

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include <jpeglib.h>
// jerror.h after jpeglib.h: the message codes (JWRN_JPEG_EOF)
#include <jerror.h>

namespace tinker::image {
namespace {

// A progressive file can hold any number of scans, each making the decoder pass over the whole
// image; real encoders write about ten. More is a file built to burn CPU.
constexpr int jpeg_max_scans = 1000;

[[noreturn]] void jpeg_fail(const std::string& what) {
  detail::fail("JPEG: " + what);
}

// ---- inspect: the marker walk -------------------------------------------------------------------

bool jpeg_is_frame_marker(std::uint8_t marker) {
  // SOF0..SOF15 without DHT (C4), JPG (C8) and DAC (CC).
  return marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
}

const char* jpeg_unsupported_frame(std::uint8_t marker) {
  switch (marker) {
    case 0xc0:  // baseline
    case 0xc1:  // extended sequential
    case 0xc2:  // progressive
    case 0xc9:  // sequential, arithmetic coding
    case 0xca:  // progressive, arithmetic coding
      return nullptr;
    case 0xc3:
    case 0xcb: return "lossless JPEG";
    default: return "hierarchical JPEG";
  }
}

std::string jpeg_hex(std::uint32_t value) {
  char text[8];
  std::snprintf(text, sizeof text, "%02X", static_cast<unsigned>(value));
  return text;
}

FileInfo jpeg_read_frame(std::span<const std::uint8_t> segment, std::uint8_t marker) {
  if (const char* kind = jpeg_unsupported_frame(marker)) {
    jpeg_fail(std::string(kind) + " (SOF marker FF" + jpeg_hex(marker) + ") is not supported");
  }
  if (segment.size() < 6) jpeg_fail("frame header (SOF) shorter than its fields");
  const std::uint8_t precision = segment[0];
  FileInfo info;
  info.format = FileFormat::jpeg;
  info.height = detail::read_be16(segment, 1);
  info.width = detail::read_be16(segment, 3);
  const std::size_t components = segment[5];
  if (precision != 8) jpeg_fail(std::to_string(precision) + "-bit samples are not supported (only 8-bit)");
  if (info.height == 0 && info.width != 0) {
    jpeg_fail("the frame leaves its height to a DNL marker, which is not supported");
  }
  if (info.width == 0 || info.height == 0) {
    jpeg_fail("zero-sized image (" + std::to_string(info.width) + "x" + std::to_string(info.height) + " pixels)");
  }
  if (components != 1 && components != 3 && components != 4) {
    jpeg_fail(std::to_string(components) + " colour components (only 1, 3 or 4 are read)");
  }
  if (segment.size() != 6 + 3 * components) jpeg_fail("frame header (SOF) length does not match its components");
  return info;
}

void jpeg_check_scan_header(std::span<const std::uint8_t> segment) {
  if (segment.empty() || segment[0] < 1 || segment[0] > 4 || segment.size() != 4u + 2u * segment[0]) {
    jpeg_fail("malformed scan header (SOS)");
  }
}

// The position of the marker that ends the entropy-coded data starting at `pos`: byte stuffing
// (FF 00) and restart markers belong to the data.
std::size_t jpeg_skip_entropy_data(std::span<const std::uint8_t> data, std::size_t pos) {
  for (;;) {
    const void* found = pos < data.size() ? std::memchr(data.data() + pos, 0xff, data.size() - pos) : nullptr;
    if (found == nullptr || static_cast<const std::uint8_t*>(found) + 1 >= data.data() + data.size()) {
      jpeg_fail("truncated: the image data ends after " + std::to_string(data.size()) +
                " bytes, without an EOI marker");
    }
    pos = static_cast<std::size_t>(static_cast<const std::uint8_t*>(found) - data.data());
    const std::uint8_t next = data[pos + 1];
    if (next == 0x00 || (next >= 0xd0 && next <= 0xd7)) {
      pos += 2;
    } else if (next == 0xff) {
      pos += 1;  // fill bytes before a marker
    } else {
      return pos;
    }
  }
}

// Walks the markers from SOI to EOI: every segment within the file, one frame, scans after it.
FileInfo jpeg_walk_markers(std::span<const std::uint8_t> data) {
  std::optional<FileInfo> frame;
  bool has_scan = false;
  std::size_t pos = 2;  // after SOI
  for (;;) {
    // Bytes before a marker that are not FF are skipped, as libjpeg skips them (with a warning):
    // some encoders leave a few after a segment.
    const void* next = pos < data.size() ? std::memchr(data.data() + pos, 0xff, data.size() - pos) : nullptr;
    if (next == nullptr) jpeg_fail("truncated: the file ends after " + std::to_string(data.size()) + " bytes");
    pos = static_cast<std::size_t>(static_cast<const std::uint8_t*>(next) - data.data());
    while (pos < data.size() && data[pos] == 0xff) ++pos;
    if (pos >= data.size()) jpeg_fail("truncated: the file ends inside a marker");
    const std::uint8_t marker = data[pos++];
    if (marker == 0xd9) {  // EOI
      if (!frame) jpeg_fail("no frame header (SOF) before the end of the image");
      if (!has_scan) jpeg_fail("no image data (SOS) before the end of the image");
      return *frame;
    }
    if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;  // TEM, RSTn: no length
    if (marker == 0x00 || marker == 0xd8) {
      jpeg_fail("unexpected marker FF" + jpeg_hex(marker) + " at byte " + std::to_string(pos - 2));
    }
    if (data.size() - pos < 2) jpeg_fail("truncated: the file ends inside a segment length");
    const std::size_t length = detail::read_be16(data, pos);
    if (length < 2) jpeg_fail("segment FF" + jpeg_hex(marker) + " at byte " + std::to_string(pos - 2) + ": length < 2");
    if (data.size() - pos < length) {
      jpeg_fail("truncated: segment FF" + jpeg_hex(marker) + " of " + std::to_string(length) + " bytes at byte " +
                std::to_string(pos - 2) + " runs past the end of the file (" + std::to_string(data.size()) + " bytes)");
    }
    const auto segment = data.subspan(pos + 2, length - 2);
    pos += length;
    if (jpeg_is_frame_marker(marker)) {
      if (frame) jpeg_fail("a second frame header (SOF)");
      frame = jpeg_read_frame(segment, marker);
    } else if (marker == 0xda) {  // SOS
      if (!frame) jpeg_fail("image data (SOS) before the frame header (SOF)");
      jpeg_check_scan_header(segment);
      has_scan = true;
      pos = jpeg_skip_entropy_data(data, pos);
    }
    // Every other segment (APPn such as EXIF, DQT, DHT, DRI, COM, ...) is skipped by its length.
  }
}

// ---- decode: libjpeg behind a jump buffer -------------------------------------------------------

struct JpegErrorManager {
  jpeg_error_mgr base;  // first, so libjpeg's pointer to it is a pointer to the whole
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

JpegErrorManager& jpeg_errors_of(j_common_ptr cinfo) {
  return *reinterpret_cast<JpegErrorManager*>(cinfo->err);
}

[[noreturn]] void jpeg_on_fatal(j_common_ptr cinfo) {
  (*cinfo->err->format_message)(cinfo, jpeg_errors_of(cinfo).message);
  std::longjmp(jpeg_errors_of(cinfo).jump, 1);
}

// Warnings are corrupt data libjpeg repairs (as every viewer does), except data that ends early,
// which it pads with grey: that is a truncated file, and an error.
void jpeg_on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpeg_on_fatal(cinfo);
}

void jpeg_on_output(j_common_ptr) {}  // the default prints to stderr

void jpeg_on_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > jpeg_max_scans) {
    std::snprintf(jpeg_errors_of(cinfo).message, JMSG_LENGTH_MAX, "more than %d scans", jpeg_max_scans);
    std::longjmp(jpeg_errors_of(cinfo).jump, 1);
  }
}

class JpegSession {
 public:
  explicit JpegSession(std::span<const std::uint8_t> file) : data(file) {
    cinfo.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = jpeg_on_fatal;
    errors.base.emit_message = jpeg_on_message;
    errors.base.output_message = jpeg_on_output;
    errors.message[0] = '\0';
    progress.progress_monitor = jpeg_on_progress;
  }
  ~JpegSession() { jpeg_destroy_decompress(&cinfo); }  // safe on a zeroed, never-created struct
  JpegSession(const JpegSession&) = delete;
  JpegSession& operator=(const JpegSession&) = delete;

  [[noreturn]] void fail() const { jpeg_fail(errors.message[0] != '\0' ? errors.message : "libjpeg failed"); }

  std::span<const std::uint8_t> data;
  jpeg_decompress_struct cinfo{};
  JpegErrorManager errors{};
  jpeg_progress_mgr progress{};
};

bool jpeg_guarded_read_header(JpegSession& session) {
  if (setjmp(session.errors.jump) != 0) return false;
  jpeg_create_decompress(&session.cinfo);
  session.cinfo.progress = &session.progress;
  jpeg_mem_src(&session.cinfo, session.data.data(), static_cast<unsigned long>(session.data.size()));
  jpeg_read_header(&session.cinfo, TRUE);
  return true;
}

// Adobe's CMYK JPEGs store the channels inverted (PIL reads them so); others store them plain.
void jpeg_cmyk_row_to_rgb(const JSAMPLE* cmyk, std::uint8_t* rgb, std::size_t width, bool inverted) {
  for (std::size_t x = 0; x < width; ++x, cmyk += 4, rgb += 3) {
    const unsigned k = inverted ? cmyk[3] : 255u - cmyk[3];
    for (int c = 0; c < 3; ++c) {
      const unsigned ink = inverted ? cmyk[c] : 255u - cmyk[c];
      rgb[c] = static_cast<std::uint8_t>(ink * k / 255u);
    }
  }
}

bool jpeg_guarded_decode(JpegSession& session, RgbImage& out, JSAMPLE* cmyk_row) {
  if (setjmp(session.errors.jump) != 0) return false;
  jpeg_start_decompress(&session.cinfo);
  const int want_components = cmyk_row != nullptr ? 4 : 3;
  if (session.cinfo.output_width != out.width || session.cinfo.output_height != out.height ||
      session.cinfo.output_components != want_components) {
    std::snprintf(session.errors.message, JMSG_LENGTH_MAX, "libjpeg decodes another size than the header's");
    return false;
  }
  while (session.cinfo.output_scanline < session.cinfo.output_height) {
    std::uint8_t* target = out.rgb.data() + std::size_t{session.cinfo.output_scanline} * out.width * 3;
    JSAMPROW row = cmyk_row != nullptr ? cmyk_row : target;
    if (jpeg_read_scanlines(&session.cinfo, &row, 1) != 1) {
      std::snprintf(session.errors.message, JMSG_LENGTH_MAX, "the decoder stopped before the last row");
      return false;
    }
    if (cmyk_row != nullptr) jpeg_cmyk_row_to_rgb(cmyk_row, target, out.width, session.cinfo.saw_Adobe_marker);
  }
  jpeg_finish_decompress(&session.cinfo);
  return true;
}

}  // namespace

namespace detail {

FileInfo inspect_jpeg(std::span<const std::uint8_t> data) {
  return jpeg_walk_markers(data);
}

RgbImage decode_jpeg(std::span<const std::uint8_t> data, const FileInfo& info, std::uint64_t max_pixels) {
  RgbImage out = allocate_rgb(info, max_pixels);
  JpegSession session(data);
  if (!jpeg_guarded_read_header(session)) session.fail();
  if (session.cinfo.image_width != info.width || session.cinfo.image_height != info.height) {
    jpeg_fail("libjpeg reads another size than the frame header's");
  }
  // libjpeg's working memory (a progressive file keeps every coefficient) in proportion to the
  // pixels allowed: past it, libjpeg fails instead of allocating.
  session.cinfo.mem->max_memory_to_use = static_cast<long>(std::min<std::uint64_t>(
      max_pixels * 16 + (std::uint64_t{64} << 20), static_cast<std::uint64_t>(std::numeric_limits<long>::max())));
  std::vector<JSAMPLE> cmyk_row;
  const bool cmyk = session.cinfo.jpeg_color_space == JCS_CMYK || session.cinfo.jpeg_color_space == JCS_YCCK;
  if (cmyk) {
    session.cinfo.out_color_space = JCS_CMYK;
    cmyk_row.resize(std::size_t{info.width} * 4);
  } else {
    session.cinfo.out_color_space = JCS_RGB;
  }
  if (!jpeg_guarded_decode(session, out, cmyk ? cmyk_row.data() : nullptr)) session.fail();
  return out;
}

}  // namespace detail
}  // namespace tinker::image
