! SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
! mpi_fortran: MPI_Init and MPI_Finalize from Fortran, through mpi_init_/mpi_finalize_.
program fmpi
  implicit none
  include 'mpif.h'
  integer :: ierr, rank
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Finalize(ierr)
end program fmpi
