#ifndef AEVATAR_SANDBOX_SANDBOX_ETC_H_
#define AEVATAR_SANDBOX_SANDBOX_ETC_H_

// The generated /etc both backends give a program (rootfs_plan.cc for the
// native backend, gvisor_bundle.cc for gVisor), so it sees one identity
// whichever backend runs it.
namespace aevatar::sandbox::etc {

inline constexpr char kPasswd[] =
    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
    "sandbox:x:65534:65534:sandbox:/workspace:/bin/bash\n";
inline constexpr char kGroup[] = "root:x:0:\nsandbox:x:65534:\n";
inline constexpr char kHosts[] = "127.0.0.1 localhost sandbox\n::1 localhost\n";
inline constexpr char kNsswitch[] = "passwd: files\ngroup: files\nhosts: files\n";

}  // namespace aevatar::sandbox::etc

#endif  // AEVATAR_SANDBOX_SANDBOX_ETC_H_
