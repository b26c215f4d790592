//===- Json.cpp - A small JSON reader for package manifests ---------------===//
//
// Part of Kiln's compiled-code runtime. See Json.h.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <cerrno>
#include <cstdlib>

using namespace kiln::rt::json;

namespace {
struct Parser {
  const std::string &t;
  size_t p = 0;
  std::string error;
  unsigned depth = 0;

  bool fail(const std::string &what) {
    if (error.empty())
      error = what + " at offset " + std::to_string(p);
    return false;
  }
  void ws() {
    while (p < t.size() &&
           (t[p] == ' ' || t[p] == '\n' || t[p] == '\t' || t[p] == '\r'))
      ++p;
  }
  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (t.compare(p, n, word) != 0)
      return fail("unexpected character");
    p += n;
    return true;
  }
  static void utf8(std::string &out, unsigned c) {
    if (c < 0x80) {
      out += (char)c;
    } else if (c < 0x800) {
      out += (char)(0xC0 | (c >> 6));
      out += (char)(0x80 | (c & 0x3F));
    } else {
      out += (char)(0xE0 | (c >> 12));
      out += (char)(0x80 | ((c >> 6) & 0x3F));
      out += (char)(0x80 | (c & 0x3F));
    }
  }
  bool string(std::string &out) {
    if (p >= t.size() || t[p] != '"')
      return fail("expected a string");
    ++p;
    while (true) {
      if (p >= t.size())
        return fail("unterminated string");
      char c = t[p++];
      if (c == '"')
        return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p >= t.size())
        return fail("unterminated string");
      char e = t[p++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (p + 4 > t.size())
          return fail("bad \\u escape");
        unsigned c = 0;
        for (int k = 0; k < 4; ++k) {
          char h = t[p++];
          c <<= 4;
          if (h >= '0' && h <= '9')
            c |= h - '0';
          else if (h >= 'a' && h <= 'f')
            c |= h - 'a' + 10;
          else if (h >= 'A' && h <= 'F')
            c |= h - 'A' + 10;
          else
            return fail("bad \\u escape");
        }
        utf8(out, c);
        break;
      }
      default:
        return fail("bad escape");
      }
    }
  }
  bool number(Value &v) {
    size_t start = p;
    bool isDouble = false;
    if (p < t.size() && t[p] == '-')
      ++p;
    while (p < t.size() && ((t[p] >= '0' && t[p] <= '9') || t[p] == '.' ||
                            t[p] == 'e' || t[p] == 'E' || t[p] == '+' ||
                            t[p] == '-')) {
      if (t[p] == '.' || t[p] == 'e' || t[p] == 'E')
        isDouble = true;
      ++p;
    }
    std::string text = t.substr(start, p - start);
    if (text.empty() || text == "-")
      return fail("unexpected character");
    char *end = nullptr;
    errno = 0;
    if (!isDouble) {
      long long i = std::strtoll(text.c_str(), &end, 10);
      if (*end == '\0' && errno == 0) {
        v.kind = Value::Int;
        v.i = i;
        return true;
      }
    }
    errno = 0;
    double d = std::strtod(text.c_str(), &end);
    if (*end != '\0')
      return fail("bad number");
    v.kind = Value::Double;
    v.d = d;
    return true;
  }
  bool value(Value &v) {
    if (++depth > 64)
      return fail("nesting too deep");
    ws();
    if (p >= t.size())
      return fail("unexpected end");
    char c = t[p];
    bool ok;
    if (c == '{') {
      ++p;
      v.kind = Value::Object;
      ws();
      ok = true;
      if (p < t.size() && t[p] == '}') {
        ++p;
      } else {
        while (true) {
          ws();
          std::string key;
          if (!string(key))
            return false;
          ws();
          if (p >= t.size() || t[p] != ':')
            return fail("expected ':'");
          ++p;
          if (!value(v.object[key]))
            return false;
          ws();
          if (p < t.size() && t[p] == ',') {
            ++p;
            continue;
          }
          if (p < t.size() && t[p] == '}') {
            ++p;
            break;
          }
          return fail("expected ',' or '}'");
        }
      }
    } else if (c == '[') {
      ++p;
      v.kind = Value::Array;
      ws();
      ok = true;
      if (p < t.size() && t[p] == ']') {
        ++p;
      } else {
        while (true) {
          v.array.emplace_back();
          if (!value(v.array.back()))
            return false;
          ws();
          if (p < t.size() && t[p] == ',') {
            ++p;
            continue;
          }
          if (p < t.size() && t[p] == ']') {
            ++p;
            break;
          }
          return fail("expected ',' or ']'");
        }
      }
    } else if (c == '"') {
      v.kind = Value::String;
      ok = string(v.s);
    } else if (c == 't') {
      v.kind = Value::Bool;
      v.b = true;
      ok = literal("true");
    } else if (c == 'f') {
      v.kind = Value::Bool;
      ok = literal("false");
    } else if (c == 'n') {
      ok = literal("null");
    } else {
      ok = number(v);
    }
    --depth;
    return ok;
  }
};
} // namespace

bool kiln::rt::json::parse(const std::string &text, Value &out,
                           std::string &error) {
  Parser parser{text, 0, {}, 0};
  out = Value();
  if (!parser.value(out)) {
    error = parser.error;
    return false;
  }
  parser.ws();
  if (parser.p != text.size()) {
    error = "trailing characters at offset " + std::to_string(parser.p);
    return false;
  }
  return true;
}
