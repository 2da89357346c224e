// The report page's assets, inlined into the binary at build time (the assembler's .incbin), so that a report
// written anywhere, the GPU host included, is one self-contained page. Chart.js comes from the system's package
// (CMakeLists.txt finds it); the page's own script and style are src/report/assets/.
#include <string_view>

#include "report/write.h"
#include "util/incbin.h"

PTXBENCH_INCBIN(ptxbench_chart_js, PTXBENCH_CHART_JS)
PTXBENCH_INCBIN(ptxbench_report_js, PTXBENCH_REPORT_JS)
PTXBENCH_INCBIN(ptxbench_report_css, PTXBENCH_REPORT_CSS)

namespace ptxbench::report {

std::string_view chart_library() {
  return {ptxbench_chart_js, static_cast<size_t>(ptxbench_chart_js_end - ptxbench_chart_js)};
}
std::string_view report_script() {
  return {ptxbench_report_js, static_cast<size_t>(ptxbench_report_js_end - ptxbench_report_js)};
}
std::string_view report_style() {
  return {ptxbench_report_css, static_cast<size_t>(ptxbench_report_css_end - ptxbench_report_css)};
}

}  // namespace ptxbench::report
