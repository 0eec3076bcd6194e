use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A monitoring plugin has its own exit codes, from argument errors on.
    if pvrdma_doctor::plugin::requested(&args) {
        return ExitCode::from(pvrdma_doctor::plugin::main(args, pvrdma_doctor::app::run));
    }
    let cli = pvrdma_doctor::cli::parse();
    match pvrdma_doctor::app::run(cli, None) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprint!("{}", pvrdma_doctor::app::error_message(&error));
            ExitCode::from(pvrdma_engine::exit::USAGE)
        }
    }
}
