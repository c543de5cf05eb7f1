// A layer's weights: checked, copied and packed into panels for the GEMM kernel once (on every
// thread when they are large), or borrowed in place for a one-shot call of a few tokens.
#include "weights.h"

#include <algorithm>
#include <cstring>

#include "../kernels/f32-gemm-rows.h"
#include "../kernels/f32-gemm.h"
#include "../parallel.h"
#include "plan.h"
#include "positions.h"

namespace wa {
namespace {

// Weight rows per packing task (one-shot calls pack every weight on every call).
constexpr std::size_t kPackRows = 64;
// Smallest weight (floats) worth packing on several threads.
constexpr std::size_t kMinParallelPack = 1 << 16;
// A one-shot call of 3 or 4 tokens reads its weights in place when every projection has at least this
// many inputs per row: packing reads and writes every weight once more, which then costs more than
// the panels save (4 tokens of 512 or 768 inputs: 1.5–1.7× faster; of 256, the panels win).
constexpr std::size_t kBorrowInputsPerRow = 128;

// Bytes of one projection stored as `dtype`: its packed heads, then its float bias.
double projection_bytes(WeightDtype dtype, std::size_t heads, std::size_t width, std::size_t in) {
  return PackedMatrix::bytes(dtype, heads, width, in) + static_cast<double>(heads * width) * sizeof(float);
}

// Allocates a projection's heads (packed later by pack_weights) and copies its bias; a borrowed
// projection reads its weights in place instead.
Status allocate_projection(Layer::Projection& p, const float* w, const float* b, std::size_t heads, std::size_t width,
                           std::size_t in, bool borrow, WeightDtype dtype) {
  p.width = width;
  p.in = in;
  if (borrow)
    p.weights.borrow(w, heads, width, in);
  else if (!p.weights.allocate(dtype, heads, width, in))
    return Status::out_of_memory;
  if (!p.bias.allocate(heads * width)) return Status::out_of_memory;
  for (std::size_t i = 0; i < heads * width; ++i) p.bias.get()[i] = b ? b[i] : 0.0f;
  return Status::ok;
}

// A projection's weights to pack: `heads` blocks of p.width rows of p.in.
struct PackJob {
  Layer::Projection* p;
  const float* w;
  std::size_t heads;
  std::size_t tasks() const { return heads * ceil_div(p->width, kPackRows); }
};

// Packs the weights in tasks of kPackRows rows of one head, on every thread when they are large: a
// one-shot call packs every weight on every call, and a few tokens cost about as much again.
void pack_weights(const PackJob* jobs, std::size_t count) {
  std::size_t tasks = 0, floats = 0;
  for (std::size_t j = 0; j < count; ++j) {
    tasks += jobs[j].tasks();
    floats += jobs[j].heads * jobs[j].p->width * jobs[j].p->in;
  }
  const TaskFn pack = [&](std::size_t t, std::size_t) {
    std::size_t j = 0;
    for (; t >= jobs[j].tasks(); ++j) t -= jobs[j].tasks();
    Layer::Projection& p = *jobs[j].p;
    const std::size_t per_head = ceil_div(p.width, kPackRows), h = t / per_head, r0 = t % per_head * kPackRows;
    p.weights.pack(h, jobs[j].w + h * p.width * p.in, p.in, 1, r0, std::min(p.width, r0 + kPackRows));
  };
  if (floats >= kMinParallelPack) {
    parallel_for(tasks, pack);
  } else {
    for (std::size_t t = 0; t < tasks; ++t) pack(t, 0);
  }
}

bool valid_config(const LayerConfig& c, const LayerWeights& w) {
  return c.q_in && c.k_in && c.v_in && c.num_heads && c.head_dim_qk && c.head_dim_v && w.wq && w.wk && w.wv &&
         (!c.out_projection || w.wo) && c.num_kv_heads && c.num_heads % c.num_kv_heads == 0 && c.rope.dim % 2 == 0 &&
         c.rope.dim <= c.head_dim_qk && (!c.rope.dim || c.rope.base > 0.0 || c.rope.inverse_frequencies) &&
         valid_weight_dtype(c.weight_dtype);
}

}  // namespace

void project_cols(const Layer::Projection& p, std::size_t h, std::size_t c0, std::size_t cols, const float* x,
                  std::size_t rows, float* out, std::size_t ldo) {
  p.weights.gemm(h, c0, cols, x, p.in, rows, p.bias.get() + h * p.width + c0, out, ldo, false);
}

double Layer::weights_bytes(const LayerConfig& c) {
  const std::size_t h = c.num_heads, kv = c.num_kv_heads;
  const WeightDtype d = c.weight_dtype;
  double bytes = projection_bytes(d, h, c.head_dim_qk, c.q_in) + projection_bytes(d, kv, c.head_dim_qk, c.k_in) +
                 projection_bytes(d, kv, c.head_dim_v, c.v_in);
  if (c.out_projection) bytes += projection_bytes(d, 1, c.output_width(), c.attn_width());
  if (c.alibi) bytes += static_cast<double>(aligned_floats(h)) * sizeof(float);
  return bytes;
}

bool Layer::borrow_pays(const LayerConfig& c, const ForwardShape& f) {
  const std::size_t inputs = std::min({c.q_in, c.k_in, c.v_in, c.out_projection ? c.attn_width() : c.q_in});
  const std::size_t widest = std::max({c.q_in, c.k_in, c.v_in, c.attn_width()});
  // gemm_rows puts 4 rows in the lanes: fewer than 3 leave most of them idle, and more than 4 (or a
  // batch) read the weights again per group, which measured slower than packing them once.
  const std::size_t rows = f.batch * std::max(f.tgt_len, f.src_len);
  return !f.cached && std::min(f.tgt_len, f.src_len) >= 3 && rows <= 4 && widest <= kMaxRowsK &&
         rows * kBorrowInputsPerRow <= inputs;
}

Status Layer::init(const LayerConfig& c, const LayerWeights& w) { return init_projections(c, w, false); }

Status Layer::init_borrowed(const LayerConfig& c, const LayerWeights& w) { return init_projections(c, w, true); }

Status Layer::init_projections(const LayerConfig& c, const LayerWeights& w, bool borrow) {
  if (!valid_config(c, w)) return Status::invalid_argument;
  config_ = c;
  config_.rope.inverse_frequencies = nullptr;           // the layer's own copy, below
  if (borrow) config_.weight_dtype = WeightDtype::f32;  // read in place as given
  const std::size_t h = c.num_heads, kv = c.num_kv_heads;
  const WeightDtype d = config_.weight_dtype;
  Status s = allocate_projection(q_, w.wq, w.bq, h, c.head_dim_qk, c.q_in, borrow, d);
  if (s == Status::ok) s = allocate_projection(k_, w.wk, w.bk, kv, c.head_dim_qk, c.k_in, borrow, d);
  if (s == Status::ok) s = allocate_projection(v_, w.wv, w.bv, kv, c.head_dim_v, c.v_in, borrow, d);
  if (s == Status::ok && c.out_projection)
    s = allocate_projection(o_, w.wo, w.bo, 1, c.output_width(), c.attn_width(), borrow, d);
  if (s != Status::ok) return s;
  if (c.rope.dim && c.rope.inverse_frequencies) {
    if (!inverse_freq_.allocate(c.rope.dim / 2)) return Status::out_of_memory;
    std::memcpy(inverse_freq_.get(), c.rope.inverse_frequencies, c.rope.dim / 2 * sizeof(double));
    config_.rope.inverse_frequencies = inverse_freq_.get();
  }
  const PackJob jobs[] = {{&q_, w.wq, h}, {&k_, w.wk, kv}, {&v_, w.wv, kv}, {&o_, w.wo, 1}};
  if (!borrow) pack_weights(jobs, c.out_projection ? 4 : 3);
  for (Projection* p : {&q_, &k_, &v_, &o_}) p->weights.finish_packing();
  if (!c.alibi) return Status::ok;
  if (!alibi_.allocate(h)) return Status::out_of_memory;
  if (w.alibi_slopes)
    std::memcpy(alibi_.get(), w.alibi_slopes, h * sizeof(float));
  else
    alibi_slopes(h, alibi_.get());
  return Status::ok;
}

}  // namespace wa
