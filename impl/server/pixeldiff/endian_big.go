//go:build armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64

package pixeldiff

// littleEndian tells that a pixel's 4 bytes read as one native 32-bit word have red in the low
// byte; as a constant it lets the compiler drop the byte swap of big-endian machines.
const littleEndian = false
