use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = pvrdma_doctor::cli::parse();
    match pvrdma_doctor::app::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprint!("{}", pvrdma_doctor::app::error_message(&error));
            ExitCode::from(pvrdma_doctor::exit::USAGE)
        }
    }
}
