// Stand-ins for the GSSAPI and LDAP functions Debian's libpq.a calls.
//
// Debian builds libpq with Kerberos (GSSAPI) and LDAP support but ships
// neither library as an archive, so a static binary cannot link them. The
// services never use either: no Kerberos login to PostgreSQL, no LDAP lookup
// of connection services. These definitions answer every call with failure,
// which libpq treats exactly as "no credentials" (GSSAPI encryption is then
// not attempted) or "the LDAP lookup failed" (a clear connection error).
// Signatures follow RFC 2744 (GSSAPI C bindings) and OpenLDAP's ldap.h, with
// opaque handles as void*.

#include <cstddef>
#include <cstdint>

namespace {

using OmUint32 = std::uint32_t;
constexpr OmUint32 kGssComplete = 0;
constexpr OmUint32 kGssFailure = 13u << 16;  // GSS_S_FAILURE
constexpr int kLdapNotSupported = -12;       // LDAP_NOT_SUPPORTED

struct GssBuffer {  // gss_buffer_desc
  std::size_t length;
  void* value;
};

char kNoGssapi[] = "GSSAPI is not available in this build";

OmUint32 Fail(OmUint32* minor) {
  if (minor != nullptr) *minor = 0;
  return kGssFailure;
}

}  // namespace

extern "C" {

void* GSS_C_NT_HOSTBASED_SERVICE = nullptr;

OmUint32 gss_acquire_cred(OmUint32* minor, void*, OmUint32, void*, int, void**, void**, OmUint32*) {
  return Fail(minor);
}
OmUint32 gss_import_name(OmUint32* minor, GssBuffer*, void*, void**) { return Fail(minor); }
OmUint32 gss_init_sec_context(OmUint32* minor, void*, void**, void*, void*, OmUint32, OmUint32,
                              void*, GssBuffer*, void**, GssBuffer*, OmUint32*, OmUint32*) {
  return Fail(minor);
}
OmUint32 gss_wrap(OmUint32* minor, void*, int, OmUint32, GssBuffer*, int*, GssBuffer*) {
  return Fail(minor);
}
OmUint32 gss_unwrap(OmUint32* minor, void*, GssBuffer*, GssBuffer*, int*, OmUint32*) {
  return Fail(minor);
}
OmUint32 gss_wrap_size_limit(OmUint32* minor, void*, int, OmUint32, OmUint32, OmUint32*) {
  return Fail(minor);
}

// libpq formats a failed call's status with this in a loop while
// *message_context is non-zero, then releases the buffer: one message, done.
OmUint32 gss_display_status(OmUint32* minor, OmUint32, int, void*, OmUint32* message_context,
                            GssBuffer* status_string) {
  if (minor != nullptr) *minor = 0;
  if (message_context != nullptr) *message_context = 0;
  if (status_string != nullptr) *status_string = GssBuffer{sizeof kNoGssapi - 1, kNoGssapi};
  return kGssComplete;
}

OmUint32 gss_release_buffer(OmUint32* minor, GssBuffer* buffer) {
  if (minor != nullptr) *minor = 0;
  if (buffer != nullptr) *buffer = GssBuffer{0, nullptr};
  return kGssComplete;
}
OmUint32 gss_release_name(OmUint32* minor, void** name) {
  if (minor != nullptr) *minor = 0;
  if (name != nullptr) *name = nullptr;
  return kGssComplete;
}
OmUint32 gss_release_cred(OmUint32* minor, void** cred) { return gss_release_name(minor, cred); }
OmUint32 gss_delete_sec_context(OmUint32* minor, void** context, GssBuffer* output) {
  if (output != nullptr) *output = GssBuffer{0, nullptr};
  return gss_release_name(minor, context);
}

// LDAP: ldap_init fails, so libpq never reaches the others; they fail too.
void* ldap_init(const char*, int) { return nullptr; }
int ldap_set_option(void*, int, const void*) { return kLdapNotSupported; }
int ldap_simple_bind(void*, const char*, const char*) { return -1; }
int ldap_search_st(void*, const char*, int, const char*, char**, int, void*, void**) {
  return kLdapNotSupported;
}
int ldap_result(void*, int, int, void*, void**) { return -1; }
int ldap_count_entries(void*, void*) { return -1; }
void* ldap_first_entry(void*, void*) { return nullptr; }
void* ldap_get_values_len(void*, void*, const char*) { return nullptr; }
void ldap_value_free_len(void*) {}
int ldap_msgfree(void*) { return 0; }
int ldap_unbind(void*) { return kLdapNotSupported; }
const char* ldap_err2string(int) { return "LDAP is not available in this build"; }

}  // extern "C"
