//===- IndexForms.h - index arithmetic as affine forms, per wave -*- C++ -*-===//
//
// The LDS race check compares the places two accesses touch. Their buffer, row and column
// indices are index arithmetic on the wave's id, loop variables and values the waves share;
// evaluated for one wave they become affine forms `c + sum(k * atom)`, where an atom is a value
// the arithmetic cannot see through (a kernel argument, a loaded scalar, `x % m`, `x / m`).
// Two forms of the same atoms are compared exactly where their difference decides it.
//
//===----------------------------------------------------------------------===//

#ifndef HK_LIB_PASSES_INDEXFORMS_H
#define HK_LIB_PASSES_INDEXFORMS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <vector>

namespace mlir::hk {

using AtomId = unsigned;

/// c + sum(k * atom): terms sorted by atom, no zero coefficient.
struct Form {
  int64_t c = 0;
  SmallVector<std::pair<AtomId, int64_t>, 2> terms;

  static Form constant(int64_t c) { return Form{c, {}}; }
  static Form of(AtomId a) { return Form{0, {{a, 1}}}; }
  bool isConstant() const { return terms.empty(); }
  bool operator==(const Form &o) const { return c == o.c && terms == o.terms; }
  bool operator!=(const Form &o) const { return !(*this == o); }
};

Form operator+(const Form &a, const Form &b);
Form operator-(const Form &a, const Form &b);
Form operator*(const Form &a, int64_t k);

/// What is known of a property for every value the atoms may take: it never holds, it may, or
/// it always does. Ordered, so that the strongest finding of several is their maximum.
enum class Verdict { Never = 0, Maybe = 1, Always = 2 };

/// An opaque value of forms.
struct Atom {
  enum Kind { Opaque, Rem, Div } kind;
  /// Opaque: the value, whose it is (a wave, or kShared when every wave has the same) and
  /// which loop iteration's (0 the current one, k the k-th before it, kAnyEarlier any before).
  Value value;
  int wave = kShared;
  int gen = 0;
  /// Rem, Div: `arg % m`, `arg / m`.
  Form arg;
  int64_t m = 0;

  static constexpr int kShared = -1;
  static constexpr int kAnyEarlier = -1;
};

/// The atoms of one analysis, interned so that equal atoms have one id. `x % m` and `x / m`
/// take x non-negative (an LDS index is), so `(x + c) % m` is `(x + c mod m) % m`.
class Atoms {
public:
  AtomId opaque(Value v, int wave, int gen);
  Form rem(const Form &x, int64_t m);
  Form div(const Form &x, int64_t m);
  const Atom &operator[](AtomId id) const { return atoms[id]; }

  /// Whether `[a, a + na)` and `[b, b + nb)` overlap.
  Verdict overlap(const Form &a, int64_t na, const Form &b, int64_t nb) const;

private:
  AtomId intern(Atom atom);
  std::vector<Atom> atoms;
  std::map<std::vector<int64_t>, AtomId> index;
};

} // namespace mlir::hk

#endif // HK_LIB_PASSES_INDEXFORMS_H
