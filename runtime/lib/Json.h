//===- Json.h - A small JSON reader for package manifests -------*- C++ -*-===//
//
// Part of Kiln's compiled-code runtime (runtime/; plain C++17). libkiln_rt
// reads package manifests with it: objects, arrays, strings (with \uXXXX
// escapes of the basic plane), integers, numbers, true/false/null.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RT_LIB_JSON_H
#define KILN_RT_LIB_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt::json {

struct Value {
  enum Kind { Null, Bool, Int, Double, String, Array, Object } kind = Null;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  /// The member `key` of an object, or null when absent / not an object.
  const Value *get(const std::string &key) const {
    if (kind != Object)
      return nullptr;
    auto it = object.find(key);
    return it == object.end() ? nullptr : &it->second;
  }
};

/// Parses `text` (the whole of it); false with `error` on malformed input.
bool parse(const std::string &text, Value &out, std::string &error);

} // namespace kiln::rt::json

#endif // KILN_RT_LIB_JSON_H
