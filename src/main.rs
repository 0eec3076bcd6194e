fn main() {
    println!("pvrdma-doctor: under construction");
}
