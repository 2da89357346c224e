// The expressions of the family descriptors and the task files: a small recursive-descent evaluator, over
// checked 64-bit integers (sizes, FLOPs, shape rules) or reals (a float argument, a hint's ratio).
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "family/family.h"

namespace ptxbench {
namespace {

template <typename T>
class Parser {
 public:
  Parser(const std::string& text, const Values& values) : text_(text), values_(values) {}

  T parse() {
    const T value = disjunction();
    skip_space();
    if (pos_ != text_.size()) fail(std::string("unexpected '") + text_[pos_] + "'");
    return value;
  }

 private:
  static constexpr bool kInteger = std::is_integral_v<T>;

  T disjunction() {
    T value = conjunction();
    while (accept("||")) {
      const T right = conjunction();
      value = (value != 0 || right != 0) ? 1 : 0;
    }
    return value;
  }
  T conjunction() {
    T value = comparison();
    while (accept("&&")) {
      const T right = comparison();
      value = (value != 0 && right != 0) ? 1 : 0;
    }
    return value;
  }
  T comparison() {
    const T left = sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!accept(op)) continue;
      const T right = sum();
      const std::string o = op;
      const bool holds = o == "=="   ? left == right
                         : o == "!=" ? left != right
                         : o == "<=" ? left <= right
                         : o == ">=" ? left >= right
                         : o == "<"  ? left < right
                                     : left > right;
      return holds ? 1 : 0;
    }
    return left;
  }
  T sum() {
    T value = product();
    for (;;) {
      if (accept("+")) {
        value = add(value, product());
      } else if (accept("-")) {
        value = add(value, negate(product()));
      } else {
        return value;
      }
    }
  }
  T product() {
    T value = unary();
    for (;;) {
      if (accept("*")) {
        const T right = unary();
        if constexpr (kInteger) {
          if (__builtin_mul_overflow(value, right, &value)) fail("overflows 64 bits");
        } else {
          value *= right;
        }
      } else if (accept("/") || accept("%")) {
        const bool modulo = text_[pos_ - 1] == '%';
        const T divisor = unary();
        if (divisor == 0) fail("division by zero");
        if constexpr (kInteger) {
          value = modulo ? value % divisor : value / divisor;
        } else {
          value = modulo ? std::fmod(value, divisor) : value / divisor;
        }
      } else {
        return value;
      }
    }
  }
  T unary() {
    if (accept("!")) return unary() == 0 ? 1 : 0;
    if (accept("-")) return negate(unary());
    return primary();
  }
  T primary() {
    skip_space();
    if (accept("(")) {
      const T value = disjunction();
      if (!accept(")")) fail("missing ')'");
      return value;
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) return number();
    size_t end = pos_;
    while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      ++end;
    if (end == pos_)
      fail(pos_ < text_.size() ? std::string("unexpected '") + text_[pos_] + "'" : "unexpected end");
    const std::string name = text_.substr(pos_, end - pos_);
    pos_ = end;
    if ((name == "sqrt" || name == "log") && accept("(")) {
      if constexpr (kInteger) {
        fail(name + "() needs a real expression");
      } else {
        const T value = disjunction();
        if (!accept(")")) fail("missing ')'");
        if (name == "sqrt" ? value < 0 : value <= 0) fail(name + " of " + std::to_string(value));
        return name == "sqrt" ? std::sqrt(value) : std::log(value);
      }
    }
    const auto it = values_.find(name);
    if (it == values_.end()) fail("unknown name '" + name + "'");
    return static_cast<T>(it->second);
  }
  T number() {
    size_t end = pos_;
    while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
    int64_t value = 0;
    if (std::from_chars(text_.data() + pos_, text_.data() + end, value).ec != std::errc())
      fail("a number too large for 64 bits");
    pos_ = end;
    return static_cast<T>(value);
  }

  T add(T left, T right) {
    if constexpr (kInteger) {
      if (__builtin_add_overflow(left, right, &left)) fail("overflows 64 bits");
      return left;
    } else {
      return left + right;
    }
  }
  T negate(T value) {
    if constexpr (kInteger) {
      if (value == std::numeric_limits<T>::min()) fail("overflows 64 bits");
    }
    return -value;
  }

  bool accept(const char* token) {
    skip_space();
    const std::string t = token;
    if (text_.compare(pos_, t.size(), t) != 0) return false;
    // "<" is not the start of "<=", "!" not of "!=", "|" alone is no operator.
    if ((t == "<" || t == ">" || t == "!") && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') return false;
    pos_ += t.size();
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("in \"" + text_ + "\" at position " + std::to_string(pos_) + ": " + what);
  }

  const std::string& text_;
  const Values& values_;
  size_t pos_ = 0;
};

}  // namespace

int64_t evaluate_expression(const std::string& expression, const Values& values) {
  return Parser<int64_t>(expression, values).parse();
}

double evaluate_real(const std::string& expression, const Values& values) {
  return Parser<double>(expression, values).parse();
}

}  // namespace ptxbench
