// The Python module hk.emu._native: builds a Program from the decoder's instruction rows, owns
// device memory, and runs a dispatch. Emulator errors become Python exceptions of their own types.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "operands.h"

namespace py = pybind11;

namespace emu {

// Reached only when executed: the decoder's note says whether the mnemonic is one the core
// lacks, its operands could not be read, or the word is not an instruction of this target.
static void unknown(Machine& m, Wave& w, const Inst& in) {
  size_t idx = size_t(&in - m.prog->insts.data());
  const std::string why = idx < m.prog->note.size() ? m.prog->note[idx] : std::string();
  m.fail(w, in, why.empty() ? "the emulator does not implement this instruction" : why);
}

static const Registry& registry() {
  static Registry r = [] {
    Registry x;
    x.add("__unknown", unknown);
    register_salu(x);
    register_sopp(x);
    register_valu(x);
    register_valu16(x);
    register_int16(x);
    register_lanes(x);
    register_vcmp(x);
    register_vmem(x);
    register_ds(x);
    register_matrix(x);
    return x;
  }();
  return r;
}

// One instruction row: these fields, in this order (the decoder reads the list).
static const std::vector<std::string>& fields() {
  static std::vector<std::string> f = [] {
    std::vector<std::string> v = {"op", "flags", "pc", "size", "target", "nd", "ns"};
    const char* ops[] = {"d0", "d1", "s0", "s1", "s2", "s3"};
    for (const char* o : ops)
      for (const char* p : {"kind", "mods", "n", "reg", "imm32", "imm16", "imm64"})
        v.push_back(std::string(o) + "_" + p);
    for (const char* p : {"offset", "offset1", "opsel", "opsel_hi", "neg_lo", "neg_hi", "omod", "dpp_kind",
                          "row_mask", "bank_mask", "dpp_val", "sdwa_dst_sel", "sdwa_dst_unused",
                          "sdwa_src0_sel", "sdwa_src1_sel", "aux0", "aux1", "aux2", "aux3"})
      v.push_back(p);
    return v;
  }();
  return f;
}

static Program* make_program(py::array_t<int64_t, py::array::c_style> rows, std::vector<std::string> text,
                             std::vector<std::string> note, uint32_t text_base, uint32_t text_end,
                             std::vector<int32_t> pc_index) {
  size_t nf = fields().size();
  if (rows.ndim() != 2 || size_t(rows.shape(1)) != nf) throw std::invalid_argument("instruction rows have the wrong shape");
  size_t n = size_t(rows.shape(0));
  if (text.size() != n || note.size() != n)
    throw std::invalid_argument("one text line and one note per instruction are required");
  auto r = rows.unchecked<2>();
  auto* p = new Program();
  p->insts.resize(n);
  size_t nops = registry().handlers.size();
  for (size_t i = 0; i < n; ++i) {
    Inst& in = p->insts[i];
    size_t k = 0;
    auto next = [&]() { return r(long(i), long(k++)); };
    int64_t op = next();
    if (op < 0 || size_t(op) >= nops) { delete p; throw std::invalid_argument("bad opcode id"); }
    in.op = uint16_t(op);
    in.flags = uint32_t(next()); in.pc = uint32_t(next()); in.size = uint32_t(next());
    in.target = int32_t(next()); in.nd = uint8_t(next()); in.ns = uint8_t(next());
    Opnd* os[] = {&in.d[0], &in.d[1], &in.s[0], &in.s[1], &in.s[2], &in.s[3]};
    for (Opnd* o : os) {
      o->kind = uint8_t(next()); o->mods = uint8_t(next()); o->n = uint8_t(next());
      o->reg = uint16_t(next()); o->imm32 = uint32_t(next()); o->imm16 = uint32_t(next());
      o->imm64 = uint64_t(next());
      if ((o->kind == K_SGPR && o->reg + o->n > NSREG) || (o->kind == K_VGPR && o->reg + o->n > NVREG)) {
        delete p;
        throw std::invalid_argument("register out of range in: " + text[i]);
      }
    }
    in.offset = int32_t(next()); in.offset1 = int32_t(next());
    in.opsel = uint8_t(next()); in.opsel_hi = uint8_t(next()); in.neg_lo = uint8_t(next());
    in.neg_hi = uint8_t(next()); in.omod = uint8_t(next()); in.dpp_kind = uint8_t(next());
    in.row_mask = uint8_t(next()); in.bank_mask = uint8_t(next()); in.dpp_val = uint32_t(next());
    in.sdwa_dst_sel = uint8_t(next()); in.sdwa_dst_unused = uint8_t(next());
    in.sdwa_src_sel[0] = uint8_t(next()); in.sdwa_src_sel[1] = uint8_t(next());
    for (int a = 0; a < 4; ++a) in.aux[a] = int32_t(next());
  }
  p->text = std::move(text);
  p->note = std::move(note);
  p->text_base = text_base;
  p->text_end = text_end;
  p->pc_index = std::move(pc_index);
  return p;
}

static Launch launch_of(const Program& prog, py::dict launch) {
  Launch l;
  l.entry = launch["entry"].cast<uint32_t>();
  auto grid = launch["grid"].cast<std::vector<uint32_t>>();
  auto block = launch["block"].cast<std::vector<uint32_t>>();
  for (int d = 0; d < 3; ++d) { l.grid[d] = grid.at(size_t(d)); l.block[d] = block.at(size_t(d)); }
  l.wsize = launch["wave_size"].cast<int>();
  l.user_sgprs = launch["user_sgprs"].cast<std::vector<uint32_t>>();
  auto en = launch["workgroup_id"].cast<std::vector<bool>>();
  for (int d = 0; d < 3; ++d) l.wg_id_en[d] = en.at(size_t(d));
  l.wg_info_en = launch["workgroup_info"].cast<bool>();
  l.private_en = launch["private_segment"].cast<bool>();
  l.packed_tid = launch["packed_tid"].cast<bool>();
  l.vgpr_workitem_id = launch["vgpr_workitem_id"].cast<int>();
  l.lds_bytes = launch["lds_bytes"].cast<uint32_t>();
  l.private_bytes = launch["private_bytes"].cast<uint32_t>();
  l.nvgpr = launch["nvgpr"].cast<uint32_t>();
  if (l.wsize != 32 && l.wsize != 64) throw Fault("the wave size must be 32 or 64");
  if (l.entry >= prog.insts.size()) throw Fault("the kernel entry is not an instruction");
  return l;
}

static void setup(Machine& m, Program& prog, Memory& mem, int family, const std::string& kernel, py::dict launch,
                  bool hazards, bool randomize, uint64_t seed, uint64_t max_instructions) {
  m.family = Family(family);
  m.mem = &mem;
  m.prog = &prog;
  m.handlers = &registry().handlers;
  m.kernel = kernel;
  m.opt.hazards = hazards || randomize;
  m.opt.randomize = randomize;
  m.opt.seed = seed;
  m.opt.max_instructions = max_instructions;
  int denorm = launch["float_denorm_mode_32"].cast<int>();      // 0 flush both, 1 flush out, 2 flush in
  m.ftz32_in = denorm == 0 || denorm == 2;
  m.ftz32_out = denorm == 0 || denorm == 1;
}

static uint64_t run(Program& prog, Memory& mem, int family, const std::string& kernel, py::dict launch,
                    bool hazards, bool randomize, uint64_t seed, uint64_t max_instructions) {
  Launch l = launch_of(prog, launch);
  Machine m;
  setup(m, prog, mem, family, kernel, launch, hazards, randomize, seed, max_instructions);
  py::gil_scoped_release nogil;
  return run_dispatch(m, l);
}

// Runs the listed workgroups recording their profile (profile.cc): (executed, streams, lines)
// with one (n, 3) int32 array per wave of each workgroup, in order, and per workgroup the sorted
// global lines it read and wrote.
static py::tuple profile(Program& prog, Memory& mem, int family, const std::string& kernel, py::dict launch,
                         bool hazards, py::dict options) {
  Launch l = launch_of(prog, launch);
  Machine m;
  setup(m, prog, mem, family, kernel, launch, hazards, false, 0, options["max_instructions"].cast<uint64_t>());
  Profile p;
  p.lds_banks = options["lds_banks"].cast<uint32_t>();
  p.lds_bank_bytes = options["lds_bank_bytes"].cast<uint32_t>();
  p.line_bytes = options["line_bytes"].cast<uint32_t>();
  p.prefix = options["prefix"].cast<uint64_t>();
  if (p.lds_banks == 0 || p.lds_banks > 128 || p.lds_bank_bytes == 0 || p.line_bytes == 0)
    throw Fault("the LDS banks (1 to 128), their width and the line size must be positive");
  for (auto g : options["workgroups"].cast<std::vector<std::vector<uint32_t>>>()) {
    if (g.size() != 3 || g[0] >= l.grid[0] || g[1] >= l.grid[1] || g[2] >= l.grid[2])
      throw Fault("a profiled workgroup must be (x, y, z) inside the grid");
    p.workgroups.push_back({g[0], g[1], g[2]});
  }
  m.prof = &p;
  uint64_t executed;
  {
    py::gil_scoped_release nogil;
    executed = run_dispatch(m, l);
  }
  py::list streams, lines;
  for (auto& s : p.streams) {
    py::array_t<int32_t> a({py::ssize_t(s.size() / 3), py::ssize_t(3)});
    if (!s.empty()) std::memcpy(a.mutable_data(), s.data(), s.size() * sizeof(int32_t));
    streams.append(a);
  }
  for (auto& [read, written] : p.lines)
    lines.append(py::make_tuple(py::array_t<uint64_t>(py::ssize_t(read.size()), read.data()),
                                py::array_t<uint64_t>(py::ssize_t(written.size()), written.data())));
  return py::make_tuple(executed, streams, lines);
}

}  // namespace emu

PYBIND11_MODULE(_native, mod) {
  using namespace emu;
  mod.doc() = "The emulator's core (see hk/emu/__init__.py for the Python API).";
  py::register_exception<Fault>(mod, "Fault");
  py::register_exception<MemFault>(mod, "MemFault");
  py::register_exception<Hazard>(mod, "Hazard");
  mod.attr("OPS") = registry().names;
  mod.attr("INST_FIELDS") = fields();
  mod.attr("FAMILIES") = py::dict(py::arg("rdna3") = int(RDNA3), py::arg("rdna4") = int(RDNA4),
                                  py::arg("cdna3") = int(CDNA3), py::arg("cdna4") = int(CDNA4));
  mod.attr("CODE_BASE") = CODE_BASE;
  mod.attr("SHARED_HI") = SHARED_HI;
  mod.attr("PRIVATE_HI") = PRIVATE_HI;
  py::class_<Program>(mod, "Program")
      .def(py::init(&make_program))
      .def("__len__", [](const Program& p) { return p.insts.size(); });
  py::class_<Memory>(mod, "Memory")
      .def(py::init<>())
      .def("alloc", &Memory::alloc, py::arg("size"), py::arg("at") = 0)
      .def("write", [](Memory& m, uint64_t addr, py::buffer b) {
        py::buffer_info info = b.request();
        uint64_t n = uint64_t(info.size) * uint64_t(info.itemsize);
        if (n) std::memcpy(m.ptr(addr, n, "a host write"), info.ptr, n);
      })
      .def("read", [](Memory& m, uint64_t addr, uint64_t n) {
        return py::bytes(reinterpret_cast<const char*>(n ? m.ptr(addr, n, "a host read") : nullptr), n);
      })
      .def("read_into", [](Memory& m, uint64_t addr, py::buffer b) {
        py::buffer_info info = b.request(true);
        uint64_t n = uint64_t(info.size) * uint64_t(info.itemsize);
        if (n) std::memcpy(info.ptr, m.ptr(addr, n, "a host read"), n);
      });
  mod.def("run", &run, py::arg("program"), py::arg("memory"), py::arg("family"), py::arg("kernel"),
          py::arg("launch"), py::arg("hazards"), py::arg("randomize"), py::arg("seed"),
          py::arg("max_instructions"));
  mod.def("profile", &profile, py::arg("program"), py::arg("memory"), py::arg("family"), py::arg("kernel"),
          py::arg("launch"), py::arg("hazards"), py::arg("options"));
}
