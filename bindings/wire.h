// What the two Embind tables (embind.cpp: attention; model-embind.cpp: models) share about the wire,
// the block of 32-bit slots the JavaScript wrapper writes before a call (bindings/wire.mjs's
// SlotStage, for both): reading a slot as a pointer or a float, the slot enum and its names for
// JavaScript from one X-macro list, and the handle-or-status convention of the create calls.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <cstring>
#include <new>

#include "../src/attention.h"  // wa::Status

namespace wa_wire {

using Wire = const std::uint32_t*;

inline Wire wire_of(std::uintptr_t address) { return reinterpret_cast<Wire>(address); }

// A slot holding a heap address (wasm32: 32 bits), as T*.
template <class T>
T* ptr(Wire w, int slot) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(w[slot]));
}

// A slot holding a float's bits.
inline float f32(Wire w, int slot) {
  float value;
  std::memcpy(&value, &w[slot], sizeof value);
  return value;
}

// A new T made ready by init(w, object): its handle, or 0 with the reason in the status slot (the
// caller frees nothing on failure).
template <class T, class Init>
std::uintptr_t create(std::uintptr_t wire, int status_slot, Init init) {
  auto* w = reinterpret_cast<std::uint32_t*>(wire);
  auto* object = new (std::nothrow) T();
  const wa::Status s = object ? init(w, *object) : wa::Status::out_of_memory;
  w[status_slot] = static_cast<std::uint32_t>(s);
  if (s != wa::Status::ok) {
    delete object;
    return 0;
  }
  return reinterpret_cast<std::uintptr_t>(object);
}

}  // namespace wa_wire

// enum Slot { slot_<name>…, slot_count } from an X-macro list of names, and a function `names`
// returning them to JavaScript as { <name>: index, …, count }: the two sides cannot drift apart.
#define WA_SLOT_ENUM_ENTRY(name) slot_##name,
#define WA_SLOT_NAME_ENTRY(name) slots.set(#name, static_cast<int>(slot_##name));
#define WA_DEFINE_SLOTS(LIST, names)                       \
  enum Slot : int { LIST(WA_SLOT_ENUM_ENTRY) slot_count }; \
  emscripten::val names() {                                \
    emscripten::val slots = emscripten::val::object();     \
    LIST(WA_SLOT_NAME_ENTRY)                               \
    slots.set("count", static_cast<int>(slot_count));      \
    return slots;                                          \
  }
