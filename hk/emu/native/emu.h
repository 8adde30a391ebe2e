// The emulator's core types: operands, pre-decoded instructions, device memory, waves and the
// machine that runs a dispatch. Semantics live in the exec_*.cc files, one per instruction class.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace emu {

// ---- errors: each becomes its own Python exception class (module.cc) ----
struct Fault : std::runtime_error {           // unsupported instruction, bad launch
  using std::runtime_error::runtime_error;
};
struct MemFault : std::runtime_error {        // an access outside every buffer, LDS or scratch
  using std::runtime_error::runtime_error;
};
struct Hazard : std::runtime_error {          // a use before its wait, a barrier racing LDS
  using std::runtime_error::runtime_error;
};

// ---- scalar register file: our own index space, independent of the encoding ----
enum : int {
  R_VCC_LO = 106, R_VCC_HI = 107, R_TTMP0 = 108, R_M0 = 124, R_NULL = 125,
  R_EXEC_LO = 126, R_EXEC_HI = 127, R_FLAT_SCR_LO = 128, R_FLAT_SCR_HI = 129,
  R_XNACK_LO = 130, R_XNACK_HI = 131, NSREG = 136,
};
constexpr int NVREG = 512;                    // v0-v255, then a0-a255 (CDNA accumulators)
constexpr int AGPR_BASE = 256;
constexpr int LANES = 64;                     // VGPR lane stride; wave32 uses the first 32

// Flat apertures (high 32 bits of a 64-bit flat address).
constexpr uint32_t SHARED_HI = 0x00010000u, PRIVATE_HI = 0x00020000u;
constexpr uint64_t CODE_BASE = 0x0000700000000000ull;

// ---- operands ----
enum Kind : uint8_t { K_NONE, K_SGPR, K_VGPR, K_INL, K_LIT, K_SCC, K_OFF, K_SHARED_BASE,
                      K_PRIVATE_BASE, K_EXECZ, K_VCCZ };
enum Mod : uint8_t { M_NEG = 1, M_ABS = 2, M_HI = 4, M_SEXT = 8, M_FLT = 16 };

struct Opnd {
  uint8_t kind = K_NONE, mods = 0, n = 0;     // n: registers in a range
  uint16_t reg = 0;
  uint32_t imm32 = 0, imm16 = 0;              // constant as f32/b32 and as f16/b16
  uint64_t imm64 = 0;                         // constant as f64/b64 (literals: raw 32 bits)
};

enum Flag : uint32_t {
  F_DPP = 1, F_DPP8 = 2, F_SDWA = 4, F_CLAMP = 8, F_VOPD = 16, F_GLC = 32, F_SLC = 64,
  F_OFFEN = 128, F_IDXEN = 256, F_LDS = 512, F_DPP_BC = 1024, F_DPP_FI = 2048, F_E64 = 4096,
  F_NT = 8192,
};
enum DppKind : uint8_t { D_QUAD, D_ROW_SHL, D_ROW_SHR, D_ROW_ROR, D_WAVE_SHL, D_WAVE_ROL,
                         D_WAVE_SHR, D_WAVE_ROR, D_ROW_MIRROR, D_ROW_HALF_MIRROR, D_BCAST15,
                         D_BCAST31, D_ROW_SHARE, D_ROW_XMASK, D_ROW_NEWBCAST };

struct Inst {
  uint16_t op = 0;
  uint32_t flags = 0;
  uint32_t pc = 0, size = 0;                  // byte address in the code object, length
  int32_t target = -1;                        // branch target, as an instruction index
  Opnd d[2], s[4];
  uint8_t nd = 0, ns = 0;
  int32_t offset = 0, offset1 = 0;
  uint8_t opsel = 0, opsel_hi = 0, neg_lo = 0, neg_hi = 0;   // bit i: source i; opsel bit 3: dst
  uint8_t omod = 0;                           // 0 none, 1 *2, 2 *4, 3 /2
  uint8_t dpp_kind = 0, row_mask = 15, bank_mask = 15;
  uint32_t dpp_val = 0;                       // quad_perm packed 2 bits each, shift amount, dpp8 selects
  uint8_t sdwa_dst_sel = 6, sdwa_dst_unused = 0, sdwa_src_sel[2] = {6, 6};
  int32_t aux[4] = {-1, -1, -1, -1};          // waitcnt fields, hwreg, cbsz/abid/blgp, ...
};

// ---- device memory: a flat 64-bit address space of buffers ----
struct Region {
  uint64_t base, size;
  // calloc'd: the pages of a large buffer are the system's zero pages until written, so a launch
  // can place tensors far larger than the bytes it touches (hk.perf profiles at full size).
  std::unique_ptr<uint8_t, void (*)(void*)> data{nullptr, std::free};
};

class Memory {
 public:
  uint64_t alloc(uint64_t size, uint64_t at = 0);   // returns the base; `at` places it
  Region* find(uint64_t addr, uint64_t n);
  // MemFault when outside. Inline for the region found last: accesses mostly stay in one buffer.
  uint8_t* ptr(uint64_t addr, uint64_t n, const char* what) {
    if (last_ < regions.size()) {
      Region& r = regions[last_];
      if (addr >= r.base && addr + n <= r.base + r.size) return r.data.get() + (addr - r.base);
    }
    return ptr_found(addr, n, what);
  }
  std::vector<Region> regions;
 private:
  uint8_t* ptr_found(uint64_t addr, uint64_t n, const char* what);
  uint64_t next_ = 0x0000100000000000ull;
  size_t last_ = 0;
};

enum Family : uint8_t { RDNA3, RDNA4, CDNA3, CDNA4 };
inline bool is_gfx9(int f) { return f == CDNA3 || f == CDNA4; }

// ---- outstanding memory operations, for the wait-counter model ----
enum Cnt : uint8_t { C_VMLOAD, C_VMSTORE, C_DS, C_SMEM, C_EXP, C_N };
enum Pipe : uint8_t { P_VMEM, P_LDS, P_SMEM, P_NONE };

struct Pending {
  uint64_t seq;
  uint8_t cnt, pipe;
  bool lgkm_too = false;                      // FLAT: counts on LGKM as well
  bool dma = false;                           // a global->LDS copy (its bytes are in Machine::dma)
  uint8_t rfile = 0;                          // 1 VGPR, 2 SGPR
  uint16_t reg = 0, nreg = 0;
  uint32_t pc;
  uint16_t op;
  std::function<void()> effect;               // deferred memory effect (randomised order only)
};

struct Machine;

// The LDS bytes [lo, hi) a global->LDS copy still in flight will write.
struct DmaWrite {
  uint64_t seq;
  int wave;
  uint32_t lo, hi, pc;
};

// The LDS bytes one wave read (wrote, updated atomically) in the current interval between two
// barriers, as a bitmap with the range it spans, and the instructions that did, with the bytes
// each spanned (races.cc).
struct LdsBits {
  std::vector<uint64_t> bits;
  uint32_t lo = ~0u, hi = 0;
  struct Access { uint32_t pc, lo, hi; };
  std::vector<Access> log;
  // Reads not in `bits` yet: another wave's write is what consults a read bitmap, so a read is
  // set when one does (most intervals end at a barrier first). Lane l reads n bytes at addr[l] + off.
  struct Lanes { uint32_t addr[LANES]; uint64_t mask; uint32_t off, n, pc; int wsize; };
  std::vector<Lanes> later;
};
struct WaveLds { LdsBits read, write, atomic; };
enum LdsAccess : uint8_t { LDS_READ, LDS_WRITE, LDS_ATOMIC };

struct Wave {
  uint32_t s[NSREG + 32];                     // padded: a range past the end cannot corrupt memory
  std::vector<uint32_t> v;                    // (NVREG + 32) * LANES, padded likewise
  bool scc = false;
  int pc = 0;                                 // instruction index
  enum State { RUN, BARRIER, DONE } state = RUN;
  int id = 0, wsize = 32;
  uint64_t full = 0;                          // all lanes of the wave
  uint64_t dpp_mask = ~0ull;                  // lanes a DPP source disabled for this instruction
  uint32_t psize = 0;                         // private bytes per lane
  std::vector<uint8_t> scratch;               // lane-major private memory
  uint32_t barrier_gen = 0;                   // the generation this wave signalled (gfx12 split barrier)
  bool signalled = false;
  // hazard bookkeeping
  std::deque<Pending> pend;
  uint16_t vpend[NVREG + 32];
  uint16_t spend[NSREG + 32];
  int npend = 0;                              // registers with an outstanding write

  uint32_t* vr(int r) { return &v[size_t(r) * LANES]; }
  uint64_t exec() const {
    return wsize == 32 ? s[R_EXEC_LO] : (s[R_EXEC_LO] | (uint64_t(s[R_EXEC_HI]) << 32));
  }
  void set_exec(uint64_t e) {
    s[R_EXEC_LO] = uint32_t(e);
    if (wsize == 64) s[R_EXEC_HI] = uint32_t(e >> 32);
  }
};

struct Program;

using Handler = void (*)(Machine&, Wave&, const Inst&);

struct Program {
  std::vector<Inst> insts;
  std::vector<std::string> text;              // disassembly, for messages
  std::vector<std::string> note;              // why an instruction decoded to __unknown
  std::vector<int32_t> pc_index;              // (pc - text_base) / 4 -> instruction index
  uint32_t text_base = 0, text_end = 0;
  int index_of(uint64_t pc) const;            // Fault when pc is not an instruction
};

struct Options {
  bool hazards = true;
  bool randomize = false;
  uint64_t seed = 0;
  uint64_t max_instructions = 2000000000ull;
};

// What a profiled run records (profile.cc): for each workgroup it runs (only those listed), each
// wave's stream of executed instructions as (instruction index, a, b), where a memory access
// puts the bytes it moved in a and, for LDS, the cycles the LDS takes to serve it (bank conflicts
// included) or, for global memory, the distinct lines it touched in b; and each workgroup's
// sorted global lines read and written.
struct Profile {
  uint32_t lds_banks = 32, lds_bank_bytes = 4, line_bytes = 128;
  uint64_t prefix = 0;                        // nonzero: stop each workgroup after this many wave-instructions
  std::vector<std::array<uint32_t, 3>> workgroups;
  std::vector<std::vector<int32_t>> streams;  // per (workgroup, wave), in that order
  std::vector<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> lines;
  size_t first_stream = 0;                    // the current workgroup's first stream
  uint32_t a = 0, b = 0;                      // what the current instruction moved
  std::vector<uint64_t> read, written;        // the current workgroup's lines
};

struct Machine {
  Family family;
  Memory* mem;
  const Program* prog;
  const std::vector<Handler>* handlers;
  Options opt;
  std::string kernel;
  std::vector<uint8_t> lds;
  std::vector<Wave> waves;
  std::vector<DmaWrite> dma;                  // copies in flight, of every wave of the workgroup
  std::vector<WaveLds> lds_bits;              // per wave, for the race check
  std::vector<uint8_t> lds_stored;            // per LDS byte, what the last plain write stored
  Profile* prof = nullptr;                    // set: record the run (profile.cc)
  uint64_t seq = 0, executed = 0;
  uint32_t barrier_gen = 0, barrier_arrived = 0, live = 0;
  uint32_t wg_id[3] = {0, 0, 0};
  bool yield_now = false;
  bool ftz32_in = false, ftz32_out = false;   // f32 denormal mode of the kernel descriptor                     // s_sleep: let the other waves run
  std::mt19937_64 rng;
  bool deferred() const { return opt.randomize; }

  [[noreturn]] void fail(const Wave& w, const Inst& in, const std::string& msg) const;
  [[noreturn]] void hazard(const Wave& w, const Inst& in, const std::string& msg) const;
  std::string where(const Wave& w, const Inst& in) const;
};

// ---- the registry of instruction handlers, filled by each exec_*.cc ----
struct Registry {
  std::vector<std::string> names;
  std::vector<Handler> handlers;
  void add(const char* name, Handler h) { names.emplace_back(name); handlers.push_back(h); }
};
void register_salu(Registry&);
void register_sopp(Registry&);
void register_valu(Registry&);
void register_valu16(Registry&);
void register_int16(Registry&);
void register_lanes(Registry&);
void register_vcmp(Registry&);
void register_vmem(Registry&);
void register_ds(Registry&);
void register_matrix(Registry&);

// ---- hazards.cc ----
void check_vread(Machine& m, Wave& w, const Inst& in, int reg, int n);
void check_sread(Machine& m, Wave& w, const Inst& in, int reg, int n);
Pending& issue(Machine& m, Wave& w, const Inst& in, Cnt cnt, Pipe pipe, int rfile, int reg, int nreg);
void finish_issue(Machine& m, Wave& w, Pending& p);
void wait_counts(Machine& m, Wave& w, const Inst& in, int vm, int lgkm, int exp, int vs);
void wait_gfx12(Machine& m, Wave& w, int cnt_mask, int n);
void retire_all(Machine& m, Wave& w);
void random_step(Machine& m, Wave& w);
void barrier_check(Machine& m, Wave& w, const Inst& in);
void dma_check(Machine& m, Wave& w, const Inst& in, const uint32_t* addr, uint64_t mask, uint32_t off, uint32_t n);

// ---- races.cc ----
// `values`, for plain writes: the bytes lane l stores at values + 16 l (null: not compared).
void lds_race(Machine& m, Wave& w, const Inst& in, const uint32_t* addr, uint64_t mask, uint32_t off,
              uint32_t n, LdsAccess kind, const uint8_t* values = nullptr);
void lds_landed(Machine& m, Wave& w, uint32_t lo, uint32_t hi, uint32_t pc);
void races_begin(Machine& m, uint32_t lds_bytes);
void races_interval(Machine& m);              // a barrier completed

// ---- profile.cc ----
uint32_t lds_cycles(const Profile& p, int wsize, const uint32_t* addr, uint64_t mask, uint32_t off, uint32_t n);
void profile_lds(Machine& m, Wave& w, const uint32_t* addr, uint64_t mask, uint32_t off, uint32_t n);
void profile_vmem(Machine& m, const uint64_t* addr, uint64_t mask, uint32_t n, bool store, int wsize);
void profile_step(Machine& m, const Wave& w, const Inst& in);
void profile_workgroup_end(Machine& m);

// ---- dispatch.cc ----
struct Launch {
  uint32_t entry = 0;                         // instruction index of the kernel's first instruction
  uint32_t grid[3] = {1, 1, 1};               // workgroups per dimension
  uint32_t block[3] = {1, 1, 1};
  int wsize = 32;
  std::vector<uint32_t> user_sgprs;
  bool wg_id_en[3] = {true, false, false};
  bool wg_info_en = false, private_en = false, packed_tid = true;
  int vgpr_workitem_id = 0;
  uint32_t lds_bytes = 0, private_bytes = 0, nvgpr = 256;
};
uint64_t run_dispatch(Machine& m, const Launch& l);

}  // namespace emu
