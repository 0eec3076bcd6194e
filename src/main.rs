use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = pvrdma_doctor::cli::parse();
    match pvrdma_doctor::app::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("pvrdma-doctor: error: {error:#}");
            ExitCode::from(pvrdma_doctor::exit::USAGE)
        }
    }
}
