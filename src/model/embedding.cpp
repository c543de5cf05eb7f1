#include "embedding.h"

#include <cstring>

namespace wa {
namespace {

// A copy of rows × hidden floats, or false.
bool copy_table(FloatBuffer& table, const float* source, std::size_t rows, std::size_t hidden) {
  if (!table.allocate(rows * hidden)) return false;
  std::memcpy(table.get(), source, rows * hidden * sizeof(float));
  return true;
}

}  // namespace

double Embedding::bytes(const ModelConfig& c) {
  const double E = static_cast<double>(c.hidden);
  double floats = c.tied_head ? 0.0 : static_cast<double>(c.vocab) * E;
  if (c.learned_positions) floats += static_cast<double>(c.max_positions) * E;
  floats += static_cast<double>(c.type_vocab) * E;
  if (c.embedding_norm) floats += 2 * E;
  return floats * sizeof(float);
}

Status Embedding::init(const ModelConfig& c, const EmbeddingWeights& w, const Linear* tied) {
  hidden_ = c.hidden;
  positions_on_ = c.learned_positions;
  types_on_ = c.type_vocab > 0;
  norm_on_ = c.embedding_norm;
  if ((!tied && !w.tokens) || (positions_on_ && !w.positions) || (types_on_ && !w.token_types))
    return Status::invalid_argument;
  tied_ = tied;
  if (!tied && !copy_table(tokens_, w.tokens, c.vocab, hidden_)) return Status::out_of_memory;
  if (positions_on_ && !copy_table(positions_, w.positions, c.max_positions, hidden_)) return Status::out_of_memory;
  if (types_on_ && !copy_table(types_, w.token_types, c.type_vocab, hidden_)) return Status::out_of_memory;
  if (norm_on_) return norm_.init(c.norm, c.norm_eps, hidden_, w.norm);
  return Status::ok;
}

void Embedding::forward(const std::int32_t* ids, const std::int32_t* types, std::size_t tokens, std::size_t pos0,
                        float* x) const {
  const std::size_t E = hidden_;
  for (std::size_t t = 0; t < tokens; ++t) {
    float* row = x + t * E;
    const std::size_t id = static_cast<std::size_t>(ids[t]);
    if (tied_)
      tied_->weight_row(id, row);
    else
      std::memcpy(row, tokens_.get() + id * E, E * sizeof(float));
    if (types_on_) {
      const float* type = types_.get() + static_cast<std::size_t>(types ? types[t] : 0) * E;
      for (std::size_t i = 0; i < E; ++i) row[i] += type[i];
    }
    if (positions_on_) {
      const float* position = positions_.get() + (pos0 + t) * E;
      for (std::size_t i = 0; i < E; ++i) row[i] += position[i];
    }
  }
  if (norm_on_) norm_.forward(x, tokens, x);
}

}  // namespace wa
