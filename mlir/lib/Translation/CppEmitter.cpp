//===- CppEmitter.cpp - names and types of the C++ translation -----------===//

#include "CppEmitter.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::hk;

std::string CppEmitter::elementName(Type element) {
  if (element.isBF16())
    return "hk::bf16";
  if (element.isF16())
    return "hk::fp16";
  if (element.isF32())
    return "float";
  if (element.isSignlessInteger(32))
    return "int32_t";
  if (element.isSignlessInteger(8))
    return "int8_t";
  if (element.isSignlessInteger(1))
    return "bool";
  if (element.isSignlessInteger(64))
    return "int64_t";
  if (isa<Float8E4M3FNType>(element))
    return "hk::fp8e4m3";
  if (isa<Float8E5M2Type>(element))
    return "hk::fp8e5m2";
  if (isa<Float8E4M3FNUZType>(element))
    return "hk::fp8e4m3fnuz";
  if (isa<Float8E5M2FNUZType>(element))
    return "hk::fp8e5m2fnuz";
  if (element.isIndex())
    return "int";
  return "";
}

static const char *layoutName(Layout layout) {
  return layout == Layout::row ? "hk::row_l" : "hk::col_l";
}

FailureOr<std::string> CppEmitter::typeName(Type type, Location loc) {
  auto element = [&](Type e) -> FailureOr<std::string> {
    std::string n = elementName(e);
    if (n.empty())
      return emitError(loc) << "hk-to-cpp cannot spell element type " << e;
    return n;
  };
  if (auto rt = dyn_cast<RegisterTileType>(type)) {
    auto e = element(rt.getElementType());
    if (failed(e))
      return failure();
    return llvm::formatv("hk::rt<{0}, {1}, {2}, {3}>", *e, rt.getRows(), rt.getCols(),
                         layoutName(rt.getLayout()))
        .str();
  }
  if (auto rv = dyn_cast<RegisterVectorType>(type)) {
    auto e = element(rv.getElementType());
    if (failed(e))
      return failure();
    // With no tile of its own, a vector is the vector of a row-layout tile of its dtype.
    if (rv.getAxis() == VecAxis::col)
      return llvm::formatv("typename hk::rt<{0}, {1}, 16, hk::row_l>::col_vec", *e, rv.getLength())
          .str();
    return llvm::formatv("typename hk::rt<{0}, 16, {1}, hk::row_l>::row_vec", *e, rv.getLength())
        .str();
  }
  if (auto st = dyn_cast<SharedTileType>(type)) {
    auto e = element(st.getElementType());
    if (failed(e))
      return failure();
    return llvm::formatv("hk::st<{0}, {1}, {2}>", *e, st.getRows(), st.getCols()).str();
  }
  if (auto sv = dyn_cast<SharedVectorType>(type)) {
    auto e = element(sv.getElementType());
    if (failed(e))
      return failure();
    return llvm::formatv("hk::sv<{0}, {1}>", *e, sv.getLength()).str();
  }
  if (auto gl = dyn_cast<GlobalType>(type)) {
    auto e = element(gl.getElementType());
    if (failed(e))
      return failure();
    return llvm::formatv("hk::gl<{0}>", *e).str();
  }
  if (auto staged = dyn_cast<StagedTileType>(type)) {
    auto e = element(staged.getElementType());
    if (failed(e))
      return failure();
    return llvm::formatv("hk::staging<hk::st<{0}, {1}, {2}>, {3}>", *e, staged.getRows(),
                         staged.getCols(), warps)
        .str();
  }
  if (isa<CoordType>(type))
    return std::string("hk::coord");
  return element(type);
}

void CppEmitter::assignVectorTiles(func::FuncOp kernel) {
  llvm::EquivalenceClasses<Value> together;
  // In program order: a group's distribution must not depend on where values were allocated.
  llvm::MapVector<Value, RegisterTileType> anchor;
  SmallVector<Value> vectors;
  auto tie = [&](Value a, Value b) {
    if (isa<RegisterVectorType>(a.getType()) && isa<RegisterVectorType>(b.getType()))
      together.unionSets(a, b);
  };
  auto anchorTo = [&](Value vec, Type tile) {
    if (isa<RegisterVectorType>(vec.getType()))
      anchor.try_emplace(vec, cast<RegisterTileType>(tile));
  };
  kernel.walk([&](Operation *op) {
    if (auto o = dyn_cast<ReduceOp>(op)) {
      anchorTo(o.getResult(), o.getX().getType());
      if (o.getInit())
        tie(o.getInit(), o.getResult());
    } else if (auto o = dyn_cast<BroadcastBinaryOp>(op)) {
      anchorTo(o.getVec(), o.getTile().getType());
    } else if (auto o = dyn_cast<BroadcastOp>(op)) {
      anchorTo(o.getVec(), o.getType());
    } else if (auto o = dyn_cast<GatherOp>(op)) {
      anchorTo(o.getRowIds(), o.getType());
    } else if (auto o = dyn_cast<ScatterOp>(op)) {
      anchorTo(o.getRowIds(), o.getValue().getType());
    } else if (isa<BinaryOp, UnaryOp, CastOp>(op)) {
      for (Value in : op->getOperands())
        tie(in, op->getResult(0));
    } else {
      forEachControlFlowTie(op, tie);
    }
    for (Value r : op->getResults())
      if (isa<RegisterVectorType>(r.getType()))
        vectors.push_back(r);
  });
  kernel.walk([&](Block *block) {
    for (BlockArgument arg : block->getArguments())
      if (isa<RegisterVectorType>(arg.getType()))
        vectors.push_back(arg);
  });
  // Each group of tied vectors takes the first tile (in program order) any of its members belongs
  // to; a use with a tile of another distribution redistributes the vector (the tile library does).
  llvm::DenseMap<Value, RegisterTileType> groupTile;
  for (auto &[vec, tile] : anchor)
    groupTile.try_emplace(together.getOrInsertLeaderValue(vec), tile);
  for (Value v : vectors)
    if (auto tile = groupTile.lookup(together.getOrInsertLeaderValue(v)))
      vectorTiles[v] = tile;
}

FailureOr<std::string> CppEmitter::valueTypeName(Value v, Location loc) {
  auto rv = dyn_cast<RegisterVectorType>(v.getType());
  auto tile = rv ? vectorTiles.lookup(v) : RegisterTileType();
  if (!tile)
    return typeName(v.getType(), loc);
  auto tileName = typeName(tile.withRole(Role::none), loc);
  std::string element = elementName(rv.getElementType());
  if (failed(tileName) || element.empty())
    return emitError(loc) << "hk-to-cpp cannot spell " << rv;
  return llvm::formatv("hk::{0}<{1}, {2}>", rv.getAxis() == VecAxis::col ? "col_vec" : "row_vec",
                       *tileName, element)
      .str();
}

std::string CppEmitter::name(Value v) {
  auto it = names.find(v);
  if (it != names.end())
    return it->second;
  const char *prefix = "v";
  if (isa<RegisterTileType, RegisterVectorType, StagedTileType>(v.getType()))
    prefix = "t";
  else if (isa<SharedTileType, SharedVectorType>(v.getType()))
    prefix = "s";
  else if (isa<CoordType>(v.getType()))
    prefix = "c";
  std::string n = prefix + std::to_string(counter++);
  names[v] = n;
  return n;
}

LogicalResult CppEmitter::declare(Value v, Location loc) {
  auto type = valueTypeName(v, loc);
  if (failed(type))
    return failure();
  line() << *type << " " << name(v) << ";\n";
  return success();
}
