//===- IndexForms.cpp - index arithmetic as affine forms, per wave --------===//

#include "IndexForms.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <cstdint>
#include <numeric>

using namespace mlir;
using namespace mlir::hk;

namespace {

Form combine(const Form &a, const Form &b, int64_t kb) {
  Form out{a.c + kb * b.c, {}};
  auto i = a.terms.begin(), j = b.terms.begin();
  while (i != a.terms.end() || j != b.terms.end()) {
    if (j == b.terms.end() || (i != a.terms.end() && i->first < j->first)) {
      out.terms.push_back(*i++);
    } else if (i == a.terms.end() || j->first < i->first) {
      out.terms.push_back({j->first, kb * j->second});
      ++j;
    } else {
      if (int64_t k = i->second + kb * j->second)
        out.terms.push_back({i->first, k});
      ++i, ++j;
    }
  }
  return out;
}

int64_t floorMod(int64_t x, int64_t m) { return ((x % m) + m) % m; }

/// Whether `lo < d < hi` for each of the values d may take.
Verdict within(ArrayRef<int64_t> values, int64_t lo, int64_t hi) {
  int64_t in = llvm::count_if(values, [&](int64_t v) { return lo < v && v < hi; });
  return in == 0 ? Verdict::Never : in == (int64_t)values.size() ? Verdict::Always : Verdict::Maybe;
}

} // namespace

Form mlir::hk::operator+(const Form &a, const Form &b) { return combine(a, b, 1); }
Form mlir::hk::operator-(const Form &a, const Form &b) { return combine(a, b, -1); }
Form mlir::hk::operator*(const Form &a, int64_t k) {
  if (k == 0)
    return Form::constant(0);
  Form out{a.c * k, {}};
  for (auto [atom, coeff] : a.terms)
    out.terms.push_back({atom, coeff * k});
  return out;
}

AtomId Atoms::intern(Atom atom) {
  std::vector<int64_t> key = {atom.kind, (int64_t)(intptr_t)atom.value.getAsOpaquePointer(),
                              atom.wave, atom.gen, atom.m, atom.arg.c};
  for (auto [id, coeff] : atom.arg.terms) {
    key.push_back(id);
    key.push_back(coeff);
  }
  auto [it, inserted] = index.try_emplace(std::move(key), (AtomId)atoms.size());
  if (inserted)
    atoms.push_back(std::move(atom));
  return it->second;
}

AtomId Atoms::opaque(Value v, int wave, int gen) {
  Atom atom{Atom::Opaque};
  atom.value = v;
  atom.wave = wave;
  atom.gen = gen;
  return intern(std::move(atom));
}

Form Atoms::rem(const Form &x, int64_t m) {
  if (x.isConstant())
    return Form::constant(x.c % m);
  Form reduced{floorMod(x.c, m), {}};
  for (auto [id, coeff] : x.terms)
    if (coeff % m)
      reduced.terms.push_back({id, floorMod(coeff, m)});
  if (reduced.isConstant())
    return reduced;
  Atom atom{Atom::Rem};
  atom.arg = std::move(reduced);
  atom.m = m;
  return Form::of(intern(std::move(atom)));
}

Form Atoms::div(const Form &x, int64_t m) {
  if (x.isConstant())
    return Form::constant(x.c / m);
  bool exact = x.c % m == 0 && llvm::all_of(x.terms, [&](auto t) { return t.second % m == 0; });
  if (exact) {
    Form out{x.c / m, {}};
    for (auto [id, coeff] : x.terms)
      out.terms.push_back({id, coeff / m});
    return out;
  }
  Atom atom{Atom::Div};
  atom.arg = x;
  atom.m = m;
  return Form::of(intern(std::move(atom)));
}

Verdict Atoms::overlap(const Form &a, int64_t na, const Form &b, int64_t nb) const {
  // [a, a + na) and [b, b + nb) overlap iff -nb < b - a < na.
  Form d = b - a;
  int64_t lo = -nb, hi = na;
  if (d.isConstant())
    return within({d.c}, lo, hi);
  // k * (x % m) - k * (y % m) with x - y = e (mod m), e != 0: the difference of the remainders
  // is e or e - m, so d takes one of two values (a double buffer's `k % 2` and `(k + 1) % 2`).
  if (d.terms.size() == 2 && d.terms[0].second == -d.terms[1].second) {
    const Atom &x = atoms[d.terms[0].first], &y = atoms[d.terms[1].first];
    if (x.kind == Atom::Rem && y.kind == Atom::Rem && x.m == y.m && (x.arg - y.arg).isConstant()) {
      int64_t e = floorMod((x.arg - y.arg).c, x.m), k = d.terms[0].second;
      return within({d.c + k * e, d.c + k * (e - x.m)}, lo, hi);
    }
  }
  // Otherwise d = c + sum(k * atom): its range where every atom is bounded (remainders are in
  // [0, m)), and its residue modulo the gcd of the coefficients.
  int64_t g = 0, min = d.c, max = d.c;
  bool bounded = true;
  for (auto [id, k] : d.terms) {
    g = std::gcd(g, k < 0 ? -k : k);
    const Atom &atom = atoms[id];
    if (atom.kind != Atom::Rem) {
      bounded = false;
      continue;
    }
    (k > 0 ? max : min) += k * (atom.m - 1);
  }
  if (bounded && (max <= lo || min >= hi))
    return Verdict::Never;
  // The least value above lo that d can take.
  int64_t first = lo + 1 + floorMod(d.c - (lo + 1), g);
  return first < hi ? Verdict::Maybe : Verdict::Never;
}
