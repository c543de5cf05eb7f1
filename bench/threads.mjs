// The bench's thread counts: `--threads 1,2,4,8,16` (or `--threads=…`) on any machine. Counts beyond
// the machine's cores run too (the engine honours up to 64 threads, the rest share the cores): each
// is reported with how many cores it really had, and its % of the peak is of those cores.
import os from 'node:os';

export const MAX_THREADS = 64; // createAttention's limit
export const DEFAULT_THREADS = [1, 2];

/** The machine's cores as the engine sees them (os.availableParallelism, as createAttention asks). */
export const machineCores = () => os.availableParallelism?.() ?? os.cpus().length;

/**
 * The thread counts of a command line: `--threads 1,2,4` or `--threads=1,2,4`; [1, 2] when absent.
 * Always holds 1 (every ratio is against one thread), sorted, without repeats.
 * @param {string[]} argv
 * @returns {number[]}
 */
export function parseThreads(argv) {
  const i = argv.findIndex((a) => a === '--threads' || a.startsWith('--threads='));
  if (i < 0) return [...DEFAULT_THREADS];
  const text = argv[i].includes('=') ? argv[i].slice(argv[i].indexOf('=') + 1) : argv[i + 1];
  if (typeof text !== 'string' || text === '' || text.startsWith('--'))
    throw new TypeError(`--threads: expected a comma-separated list of thread counts such as 1,2,4, got nothing`);
  const counts = text.split(',').map((s) => {
    const n = Number(s.trim());
    if (s.trim() === '' || !Number.isInteger(n) || n < 1 || n > MAX_THREADS)
      throw new RangeError(
        `--threads: each count must be an integer from 1 to ${MAX_THREADS}, got ${JSON.stringify(s)}`,
      );
    return n;
  });
  return [...new Set([1, ...counts])].sort((a, b) => a - b);
}

/** The arguments left once `--threads` and its value are taken out (for the parsers that follow). */
export function withoutThreads(argv) {
  const i = argv.findIndex((a) => a === '--threads' || a.startsWith('--threads='));
  if (i < 0) return argv;
  return argv.filter((_, j) => j !== i && !(argv[i] === '--threads' && j === i + 1));
}

/**
 * What each count gets on this machine: the cores it can use at once, and a note when it has fewer
 * cores than threads (printed with the tables).
 * @param {number[]} counts
 * @param {number} cores
 */
export function threadPlan(counts, cores = machineCores()) {
  return counts.map((threads) => ({
    threads,
    cores: Math.min(threads, cores),
    note:
      threads > cores
        ? `${threads} threads on ${cores} core${cores > 1 ? 's' : ''}: they run, sharing the cores, so their time shows the cost of oversubscription and their % peak is of ${cores} core${cores > 1 ? 's' : ''}`
        : null,
  }));
}
