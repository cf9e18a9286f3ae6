package pluginpkg

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
	"strings"
)

// binaryMismatch says why the executable at path is not a build for
// platform ("os/arch"), or "" when it is or when its format is not one
// this check knows (a script, say): it catches a build copied into the
// wrong directory, not every possible mistake.
func binaryMismatch(path, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	format, arch := binaryKind(path)
	if format == "" {
		return ""
	}
	want := "ELF"
	switch goos {
	case "darwin", "ios":
		want = "Mach-O"
	case "windows":
		want = "PE"
	case "js", "wasip1":
		return ""
	}
	switch {
	case format != want:
		article := "a"
		if format == "ELF" {
			article = "an"
		}
		return fmt.Sprintf("is %s %s executable, not a %s build", article, format, platform)
	case arch != "" && arch != goarch:
		return fmt.Sprintf("is built for %s, not %s", arch, goarch)
	}
	return ""
}

// binaryKind reads an executable's format and GOARCH ("" when unknown).
func binaryKind(path string) (format, arch string) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		switch f.Machine {
		case elf.EM_X86_64:
			arch = "amd64"
		case elf.EM_AARCH64:
			arch = "arm64"
		case elf.EM_386:
			arch = "386"
		case elf.EM_ARM:
			arch = "arm"
		case elf.EM_RISCV:
			arch = "riscv64"
		case elf.EM_S390:
			arch = "s390x"
		case elf.EM_PPC64:
			arch = "ppc64"
			if f.ByteOrder.String() == "LittleEndian" {
				arch = "ppc64le"
			}
		}
		return "ELF", arch
	}
	if f, err := macho.Open(path); err == nil {
		defer f.Close()
		switch f.Cpu {
		case macho.CpuAmd64:
			arch = "amd64"
		case macho.CpuArm64:
			arch = "arm64"
		}
		return "Mach-O", arch
	}
	if f, err := pe.Open(path); err == nil {
		defer f.Close()
		switch f.Machine {
		case pe.IMAGE_FILE_MACHINE_AMD64:
			arch = "amd64"
		case pe.IMAGE_FILE_MACHINE_ARM64:
			arch = "arm64"
		case pe.IMAGE_FILE_MACHINE_I386:
			arch = "386"
		}
		return "PE", arch
	}
	return "", ""
}
