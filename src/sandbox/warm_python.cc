#include "sandbox/warm_python.h"

#include <cstdint>

namespace aevatar::sandbox {
namespace {

// Runs as the -c program. Only modules a cold start has loaded already are
// imported (os by site, the frozen import machinery), so sys.modules stays
// as it would be. Its own names leave `__main__` before the program runs.
// Afterwards it does what the interpreter does after a script
// (_PyRun_SimpleFileObject, Py_RunMain): an uncaught exception sets
// sys.last_*, goes to sys.excepthook without this code's frame, and exits 1;
// `__file__` and `__cached__` go before exit handlers run; an uncaught
// KeyboardInterrupt finalizes and then dies of SIGINT.
constexpr char kStartUp[] = R"PY(def _aevatar_warm_start():
    import os, sys
    from _frozen_importlib_external import SourceFileLoader
    def read_exactly(size):
        chunks = []
        while size > 0:
            chunk = os.read(0, min(size, 1 << 20))
            if not chunk:
                raise SystemExit(0)  # the engine gave this sandbox up
            chunks.append(chunk)
            size -= len(chunk)
        return b''.join(chunks)
    source = read_exactly(int.from_bytes(read_exactly(8), 'little'))
    path = sys.argv[1]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    view = memoryview(source)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)
    main = sys.modules['__main__'].__dict__
    del main['_aevatar_warm_start']
    main['__loader__'] = SourceFileLoader('__main__', path)
    main['__file__'] = path
    main['__cached__'] = None
    sys.argv[:] = [path]
    sys.orig_argv[:] = ['python3', '-I', path]
    sys.path_importer_cache.setdefault(path, None)
    sys._aevatar_warm_source = source
_aevatar_warm_start()
try:
    exec(compile(__import__('sys').__dict__.pop('_aevatar_warm_source'), __file__, 'exec',
                 dont_inherit=True), __import__('sys').modules['__main__'].__dict__)
except BaseException as _aevatar_warm_error:
    if isinstance(_aevatar_warm_error, SystemExit):
        raise
    _aevatar_warm_error.__traceback__ = _aevatar_warm_error.__traceback__.tb_next
    __import__('sys').last_type = type(_aevatar_warm_error)
    __import__('sys').last_value = _aevatar_warm_error
    __import__('sys').last_traceback = _aevatar_warm_error.__traceback__
    if __import__('sys').version_info >= (3, 12):
        __import__('sys').last_exc = _aevatar_warm_error
    __import__('sys').excepthook(type(_aevatar_warm_error), _aevatar_warm_error,
                                 _aevatar_warm_error.__traceback__)
    __import__('sys').modules['__main__'].__dict__.pop('__file__', None)
    __import__('sys').modules['__main__'].__dict__.pop('__cached__', None)
    if isinstance(_aevatar_warm_error, KeyboardInterrupt):
        del _aevatar_warm_error
        if 'threading' in __import__('sys').modules:
            __import__('threading')._shutdown()
        __import__('atexit')._run_exitfuncs()
        for _aevatar_warm_stream in (__import__('sys').stdout, __import__('sys').stderr):
            try:
                _aevatar_warm_stream.flush()
            except Exception:
                pass
        __import__('signal').signal(__import__('signal').SIGINT, __import__('signal').SIG_DFL)
        __import__('os').kill(__import__('os').getpid(), __import__('signal').SIGINT)
        __import__('os')._exit(130)
    raise SystemExit(1)
else:
    __import__('sys').modules['__main__'].__dict__.pop('__file__', None)
    __import__('sys').modules['__main__'].__dict__.pop('__cached__', None)
)PY";

}  // namespace

std::vector<std::string> WarmPythonArgv(const std::string& program_path) {
  return {"python3", "-I", "-c", kStartUp, program_path};
}

std::string WarmPythonInput(std::string_view source, std::string_view stdin_data) {
  std::string input;
  input.reserve(8 + source.size() + stdin_data.size());
  uint64_t length = source.size();
  for (int i = 0; i < 8; ++i, length >>= 8) input.push_back(static_cast<char>(length & 0xff));
  input.append(source);
  input.append(stdin_data);
  return input;
}

}  // namespace aevatar::sandbox
