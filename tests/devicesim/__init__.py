"""Device-side simulators behind pseudo-terminals, for flashing tests without hardware.

Each runs in a thread on the pty's master side; the flasher opens the slave path like a serial
port. They are written from the protocol documents (ST AN3155; the Arduino SAM-BA monitor as
the Arduino bootloader implements it), not from tinycompile's clients, so a client that gets a
checksum, a count or an address wrong is refused or caught by the test's read-back.
"""

from .ptydev import PtyDevice
from .samba import SambaSim
from .stm32rom import Stm32RomSim

__all__ = ["PtyDevice", "SambaSim", "Stm32RomSim"]
