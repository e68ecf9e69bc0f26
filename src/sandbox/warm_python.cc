#include "sandbox/warm_python.h"

#include <cstdint>

namespace aevatar::sandbox {
namespace {

// Runs as the -c program. Only modules a cold start has loaded already are
// imported (os by site, the frozen import machinery), so sys.modules stays
// as it would be. Its own names leave `__main__` before the program runs;
// a failure of the program is printed without this code's frame, as the
// interpreter prints it for a script, and exits as it would (1, or killed
// by SIGINT for an uncaught KeyboardInterrupt).
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
    sys._aevatar_warm_source = source
_aevatar_warm_start()
try:
    exec(compile(__import__('sys').__dict__.pop('_aevatar_warm_source'), __file__, 'exec',
                 dont_inherit=True), __import__('sys').modules['__main__'].__dict__)
except BaseException as _aevatar_warm_error:
    if isinstance(_aevatar_warm_error, SystemExit):
        raise
    _aevatar_warm_error.__traceback__ = _aevatar_warm_error.__traceback__.tb_next
    __import__('sys').excepthook(type(_aevatar_warm_error), _aevatar_warm_error,
                                 _aevatar_warm_error.__traceback__)
    if isinstance(_aevatar_warm_error, KeyboardInterrupt):
        import atexit, os, signal, sys
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    raise SystemExit(1)
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
