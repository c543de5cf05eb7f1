// The body of a pthread worker in browsers, as an ES module.
//
// Emscripten 3.1.6 ships a classic worker script that importScripts() (or import()s, by URL) the
// glue: a bundler cannot follow that, and a static host may not serve the file it names as
// JavaScript. Here the glue is a static import of the module worker that calls servePthread
// (dist/wasm-attention-*-mt.worker.mjs, written by scripts/assemble-dist.mjs), so Vite and webpack
// bundle the worker with its glue, and any host that serves .mjs serves it. The protocol is
// Emscripten's own (its src/worker.js for this version): 'load' brings the compiled module and the
// shared memory, 'run' starts a thread, and so on.
export function servePthread(createModule) {
  let Module = {};
  let embindReady = false;
  const err = (...parts) => console.error(parts.join(' '));

  Module.instantiateWasm = (imports, receiveInstance) => {
    const instance = new WebAssembly.Instance(Module.wasmModule, imports);
    receiveInstance(instance);
    Module.wasmModule = null;
    return instance.exports;
  };

  function runThread(data) {
    Module.__performance_now_clock_drift = performance.now() - data.time;
    Module.__emscripten_thread_init(data.threadInfoStruct, 0, 0, 1);
    Module.establishStackSpace();
    Module.PThread.receiveObjectTransfer(data);
    Module.PThread.threadInit();
    if (!embindReady) {
      Module.___embind_register_native_and_builtin_types();
      embindReady = true;
    }
    try {
      const result = Module.invokeEntryPoint(data.start_routine, data.arg);
      if (Module.keepRuntimeAlive()) Module.PThread.setExitStatus(result);
      else Module.__emscripten_thread_exit(result);
    } catch (ex) {
      if (ex === 'unwind') return;
      if (!(ex instanceof Module.ExitStatus)) throw ex;
      if (!Module.keepRuntimeAlive()) Module.__emscripten_thread_exit(ex.status);
    }
  }

  self.onmessage = (e) => {
    const data = e.data;
    try {
      if (data.cmd === 'load') {
        Module.wasmModule = data.wasmModule;
        Module.wasmMemory = data.wasmMemory;
        Module.buffer = data.wasmMemory.buffer;
        Module.ENVIRONMENT_IS_PTHREAD = true;
        createModule(Module).then((instance) => {
          Module = instance;
        });
      } else if (data.cmd === 'run') {
        runThread(data);
      } else if (data.cmd === 'cancel') {
        if (Module._pthread_self()) Module.__emscripten_thread_exit(-1);
      } else if (data.cmd === 'processThreadQueue') {
        if (Module._pthread_self()) Module._emscripten_current_thread_process_queued_calls();
      } else if (data.cmd === 'processProxyingQueue') {
        if (Module._pthread_self()) Module._emscripten_proxy_execute_queue(data.queue);
      } else if (data.target !== 'setimmediate') {
        err(`wasm-attention pthread worker: unknown command ${data.cmd}`);
      }
    } catch (ex) {
      err(`wasm-attention pthread worker: ${ex}`);
      if (ex && ex.stack) err(ex.stack);
      Module.__emscripten_thread_crashed?.();
      throw ex;
    }
  };
}
