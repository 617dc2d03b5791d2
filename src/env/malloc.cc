#include "env/malloc.h"

#include <malloc.h>

#include "env/process.h"

#ifdef ALLOT_WITH_TCMALLOC
#include <gperftools/malloc_extension.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#endif

namespace allot::env {

#ifdef ALLOT_WITH_TCMALLOC

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

// tcmalloc's source of memory: whole 2 MiB pages, aligned and marked MADV_HUGEPAGE, so that the
// kernel (transparent huge pages in "madvise" mode, Debian's default) backs them with huge pages.
// Falls back to tcmalloc's own allocator when mmap fails.
class HugePageSysAllocator final : public SysAllocator {
 public:
  explicit HugePageSysAllocator(SysAllocator* fallback) : fallback_(fallback) {}

  void* Alloc(std::size_t size, std::size_t* actual_size, std::size_t alignment) override {
    // tcmalloc asks for powers of two; anything else is the fallback's to align.
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return fallback_->Alloc(size, actual_size, alignment);
    }
    const std::size_t align = alignment > kHugePage ? alignment : kHugePage;
    const std::size_t rounded = (size + kHugePage - 1) & ~(kHugePage - 1);
    if (rounded < size || rounded + align < rounded) return nullptr;  // overflow
    const std::size_t span = rounded + align;                         // room to align the start
    void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return fallback_->Alloc(size, actual_size, alignment);
    char* const base = static_cast<char*>(raw);
    const std::size_t lead = (align - reinterpret_cast<std::uintptr_t>(raw) % align) % align;
    char* const aligned = base + lead;
    if (lead > 0) ::munmap(base, lead);
    if (span > lead + rounded) ::munmap(aligned + rounded, span - lead - rounded);
    // Advice, not a need: without it the pages are 4 KiB ones.
    (void)::madvise(aligned, rounded, MADV_HUGEPAGE);
    if (actual_size != nullptr) *actual_size = rounded;
    return aligned;
  }

 private:
  SysAllocator* fallback_;
};

}  // namespace

bool TcmallocLinked() { return true; }

Status PrepareServerMalloc(char** /*argv*/) {
  MallocExtension* ext = MallocExtension::instance();
  // Never freed: tcmalloc keeps using it until the process ends.
  static HugePageSysAllocator* const kHugePages =
      new HugePageSysAllocator(ext->GetSystemAllocator());
  ext->SetSystemAllocator(kHugePages);
  return Status::Ok();
}

std::int64_t HeapInUse() {
  std::size_t bytes = 0;
  MallocExtension::instance()->GetNumericProperty("generic.current_allocated_bytes", &bytes);
  return static_cast<std::int64_t>(bytes);
}

void ReleaseFreeMemory() { MallocExtension::instance()->ReleaseFreeMemory(); }

#else  // glibc's malloc

bool TcmallocLinked() { return false; }

Status PrepareServerMalloc(char** argv) {
  RunAgainWithHugePageMalloc(argv);
  return PadMallocHeap();
}

std::int64_t HeapInUse() {
  const struct mallinfo2 m = ::mallinfo2();
  return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
}

void ReleaseFreeMemory() { (void)::malloc_trim(0); }

#endif

}  // namespace allot::env
