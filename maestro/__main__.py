from maestro.cli import console_main

console_main()
